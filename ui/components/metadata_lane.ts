/**
 * The session filter lane: sessions whose name, title, project, id or source hold every
 * word of the query — asked of the server, so it covers the WHOLE catalog, not only the
 * pages the recent list happened to load (it used to say "0 matches in 50 loaded
 * sessions" for a session on page 3). The first few matches show at once; "Show more"
 * pages through the rest. It sits under the message lane (which covers the full text) and
 * takes no room while it has nothing to show: no box, no heading, for no match (an empty
 * lane used to cost 90 px above the message hits) or before the first answer — unless it
 * is the only lane (`standalone`: no message search), when it says so.
 */
import { html } from "htm/preact";
import type { Source } from "../api_client.ts";
import { useSessions } from "../hooks/use_sessions.ts";
import { queryTerms } from "../lib/fold.ts";
import { plural } from "../lib/format.ts";
import { Notice } from "./notice.ts";
import { SessionCard } from "./session_card.ts";

/** Matches shown before "Show more". */
export const FILTER_FIRST_PAGE = 6;

/** Props of {@link MetadataLane}. */
export interface MetadataLaneProps {
  q: string;
  sources: readonly Source[];
  /** The only lane (no message search): it shows its state even when it has no match. */
  standalone?: boolean;
}

/** The lane. */
export function MetadataLane({ q, sources, standalone = false }: MetadataLaneProps) {
  const m = useSessions({ source: sources, q, firstPage: FILTER_FIRST_PAGE });
  const terms = queryTerms(q, 1);
  const settled = !m.loading && m.shownQ === q.trim() && m.total !== null;
  const count = m.total === null
    ? "Searching…"
    : `${plural(m.total, "session matches", "sessions match")}${settled ? "" : " · updating…"}`;
  const card = (s: (typeof m.sessions)[number]) =>
    html`
      <li key=${s.key} class="card-item">
        <${SessionCard} sessionKey=${s.key} source=${s.source} summary=${s} terms=${terms} />
      </li>
    `;
  // Nothing to show and nothing to say: no box at all. Before the first answer nothing is
  // rendered; a settled "no match" leaves a hidden (boxless) marker saying which query it
  // answered, so "nothing matches" can be told from "not answered yet".
  if (!m.sessions.length && !m.error && !standalone) {
    return settled
      ? html`<section class="lane" hidden aria-busy="false" data-filter-q=${m.shownQ} />`
      : null;
  }
  const more = m.hasMore && html`
    <button type="button" class="btn ghost more" onClick=${m.loadMore} disabled=${m.loading}>
      ${m.loading ? "Loading…" : `Show more (${(m.total ?? 0) - m.sessions.length} more)`}
    </button>
  `;
  return html`
    <section class="lane" aria-labelledby="lane-meta-h" aria-busy=${String(!settled)}
      data-filter-q=${m.shownQ}>
        <div class="lane-head">
          <h2 id="lane-meta-h">Sessions</h2>
          <span class="lane-status" role="status">${count}</span>
        </div>
        ${m.error &&
          html`<${Notice} tone="error" text=${m.error} action=${{
            label: "Retry",
            run: m.reload,
          }} />`}
        ${settled && m.total === 0 &&
          html`<p class="empty">No session name, title, project or id matches.</p>`}
        <ul class=${settled ? "cards" : "cards stale"} role="list"
          aria-label="Sessions matching by name, project or id">
          ${m.sessions.map(card)}
        </ul>
        ${more}
      </section>
  `;
}
