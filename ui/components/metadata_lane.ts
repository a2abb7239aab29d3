/**
 * The immediate metadata lane: a client-side folded match (every word ANDed) over the
 * names, titles, projects and ids of the sessions already loaded — no request, so it
 * answers on the keystroke. The message lane below it covers the full text.
 */
import { html } from "htm/preact";
import { useMemo, useState } from "preact/hooks";
import type { SessionSummary } from "../api_client.ts";
import { foldText, matchesAll, queryTerms } from "../lib/fold.ts";
import { plural } from "../lib/format.ts";
import { SessionCard } from "./session_card.ts";

const SHOWN = 6;

/** The folded text the metadata lane matches a session against. */
export function metadataHaystack(s: SessionSummary): string {
  const fields = [s.name, s.title, s.project, s.session_id, s.source];
  return foldText(fields.filter(Boolean).join("\n"));
}

/** Sessions matching every word of `q` (one-character words included). */
export function matchSessions(
  sessions: readonly SessionSummary[],
  hay: ReadonlyMap<string, string>,
  q: string,
): SessionSummary[] {
  const terms = queryTerms(q, 1);
  if (!terms.length) return [];
  return sessions.filter((s) => matchesAll(hay.get(s.key) ?? metadataHaystack(s), terms));
}

/** Props of {@link MetadataLane}. */
export interface MetadataLaneProps {
  sessions: readonly SessionSummary[];
  q: string;
  onRenamed(key: string, name: string | null): void;
}

/** The lane. */
export function MetadataLane({ sessions, q, onRenamed }: MetadataLaneProps) {
  const [all, setAll] = useState(false);
  const hay = useMemo(() => new Map(sessions.map((s) => [s.key, metadataHaystack(s)])), [sessions]);
  const matches = useMemo(() => matchSessions(sessions, hay, q), [sessions, hay, q]);
  const terms = queryTerms(q, 1);
  const shown = all ? matches : matches.slice(0, SHOWN);
  const count = `${plural(matches.length, "match", "matches")} in ${
    plural(sessions.length, "loaded session")
  }`;
  const card = (s: SessionSummary) =>
    html`
      <li key=${s.key} class="card-item">
        <${SessionCard} sessionKey=${s.key} source=${s.source} summary=${s} terms=${terms}
          onRenamed=${onRenamed} />
      </li>
    `;
  const toggleLabel = all ? "Show fewer" : `Show all ${matches.length}`;
  const toggle = matches.length > SHOWN &&
    html`
      <button type="button" class="btn ghost more" aria-expanded=${String(all)}
        onClick=${() => setAll(!all)}>${toggleLabel}</button>
    `;

  return html`<section class="lane" aria-labelledby="lane-meta-h">
    <div class="lane-head">
      <h2 id="lane-meta-h">Sessions</h2>
      <span class="lane-status" role="status">${count}</span>
    </div>
    <ul class="cards" role="list" aria-label="Sessions matching by name, project or id">
      ${shown.map(card)}
    </ul>
    ${toggle}
  </section>`;
}
