/**
 * The full-text message lane, first under the toolbar (message hits are what a query is
 * usually after; the session-title lane follows it): one card per session with up to
 * three hits, "load more" on the server's cursor, and honest status: a count that settles
 * ("20 of 57 sessions" when the server knows the total, "20+ sessions" while more exist,
 * "12 sessions" when that is all), searching, partial (retrying / ran out of time / budget
 * / sessions that could not be searched because their index data is damaged — being
 * rebuilt, or lost), restarted after a 410, index still building, errors with a retry, and
 * an empty state that offers only widenings the server found something with
 * (lane_empty.ts). While a newer query is pending the previous results stay dimmed
 * (aria-busy); `data-q` always names the query the shown results answer and `data-key`
 * that query with its filters. A team page's groups name their machine: the card shows
 * it as a badge and it and its hits open the remote session (its prose from the team
 * database) instead of this machine's session page. The head holds the "Best match |
 * Newest" switch (sort_toggle.ts; Best match is disabled in team scope). A relevance page
 * (issue 27) puts a divider before its first related group and a badge on each (the card
 * does: session_card.ts); a question of only common words searched nothing and the lane
 * says so in one line instead of an empty state. Under a settled page it offers "Search
 * tool output too" (Deep Search: deep_lane.ts) and, when the page is short, "Search the
 * archive".
 */
import { html } from "htm/preact";
import type { SearchGroup, SearchSort, SessionSummary, TeamSearchGroup } from "../api_client.ts";
import type { LaneModel } from "../hooks/use_search_lane.ts";
import { useMaskSecrets } from "../hooks/use_mask_secrets.ts";
import { sessionsCount } from "../lib/format.ts";
import { shownTitleText } from "../lib/masking.ts";
import { laneKey, type LaneState } from "../lib/search_lane.ts";
import { detailQuery, ONLY_COMMON_TEXT, RELATED_DIVIDER_TEXT } from "../lib/relevance.ts";
import { remoteHref } from "../lib/route.ts";
import { HitRow } from "./hit_row.ts";
import { LaneEmpty, type Widening } from "./lane_empty.ts";
import { Notice } from "./notice.ts";
import { SessionCard } from "./session_card.ts";
import { SortToggle } from "./sort_toggle.ts";

/** Props of {@link MessageLane}. */
export interface MessageLaneProps {
  lane: LaneModel;
  summaries: ReadonlyMap<string, SessionSummary>;
  /** Applies a widening the empty state offers (rewound messages, all sources, all roles). */
  onWiden(w: Widening): void;
  /** The order the view asks for (the switch shows it). @default "newest" */
  sort?: SearchSort;
  /** Changes the order; absent: no switch. */
  onSort?(sort: SearchSort): void;
  /** Why Best match cannot be used here (team scope), or null. */
  sortUnavailable?: string | null;
  /**
   * Archive search (sessions older than the window): whether this lane shows it, and the
   * switch in and out. Absent (team scope): no link.
   */
  archive?: { active: boolean; toggle(): void } | null;
  /** Starts Deep Search of this query (tool output too); absent (team scope): no action. */
  onDeep?: (() => void) | null;
}

/** Fewer groups than this on a complete page offer "Search the archive". */
const ARCHIVE_OFFER_BELOW = 3;
const ARCHIVE_LABEL = "From the archive — sessions older than the message window, and " +
  "deleted sessions the vault kept (read from disk on request).";

const BUILDING = "The index is still building — results may be incomplete.";

function statusText(l: LaneState): string {
  if (l.status === "idle") {
    return "Type at least 2 characters (1 in Chinese, Japanese or Korean) to search messages";
  }
  if (l.status === "loading" && !l.groups.length) return "Searching…";
  if (l.status === "error") return "Search failed";
  if (l.queryTerms?.only_common && !l.groups.length) return "nothing searched";
  const more = l.cursor !== null || l.partial === "timeout";
  const parts = [sessionsCount(l.groups.length, { total: l.totalSessions, more })];
  if (l.tookMs !== null) parts.push(`${Math.round(l.tookMs)} ms`);
  if (l.status === "loading") parts.push("updating…");
  return parts.join(" · ");
}

/** The message lane. */
export function MessageLane(props: MessageLaneProps) {
  const { lane, summaries, onWiden, sort = "newest", onSort, sortUnavailable = null } = props;
  const archive = props.archive ?? null;
  const s = lane.state;
  const mask = useMaskSecrets();
  const q = s.shownQuery?.q.trim() ?? "";
  const busy = s.status === "loading";
  const retry = { label: "Retry", run: lane.retry };
  const canRetry = (s.partial === "timeout" || s.degraded !== null) && s.status === "ready";
  const onlyCommon = s.queryTerms?.only_common === true && !s.groups.length;
  const empty = s.status === "ready" && !s.groups.length && !onlyCommon;
  // "No messages match" is a claim about the whole index: only a complete answer makes it.
  const emptyComplete = empty && s.partial === null && s.degraded === null && !s.building;
  const firstRelated = s.groups.findIndex((g) => g.relevance?.tier === "related");
  const linkQ = detailQuery(q, s.queryTerms); // what a hit's page highlights and steps through
  const card = (g: SearchGroup) => {
    // A team group: its session lives on another machine (or is this one's, as published).
    const machine = "machine" in g ? (g as TeamSearchGroup).machine : null;
    const href = machine === null ? undefined : remoteHref(machine, g.session_key, { q: linkQ });
    const hits = g.hits.map((h) =>
      html`
        <${HitRow} key=${h.record_id} sessionKey=${g.session_key} hit=${h} q=${linkQ}
          href=${href} />
      `
    );
    const summary = machine === null ? summaries.get(g.session_key) ?? null : null;
    const label = `Hits in ${shownTitleText(g.title ?? g.session_id, mask)}`;
    return html`
      <li key=${machine === null ? g.session_key : `${machine}/${g.session_key}`}
        class="card-item">
        <${SessionCard} sessionKey=${g.session_key} source=${g.source} group=${g}
          summary=${summary} machine=${machine} href=${href}
          children=${html`<ul class="hits" role="list" aria-label=${label}>${hits}</ul>`} />
      </li>
    `;
  };
  const divider = html`
    <li key="related-divider" class="related-divider">${RELATED_DIVIDER_TEXT}</li>
  `;
  const moreLabel = s.loadingMore ? "Loading…" : "Load more results";
  const more = s.cursor && html`
    <button type="button" class="btn more" onClick=${lane.loadMore}
      disabled=${s.loadingMore || busy}>${moreLabel}</button>
  `;
  const notice = s.notice &&
    html`<${Notice} tone="warn" text=${s.notice} action=${canRetry ? retry : null} />`;
  const listClass = s.stale ? "cards stale" : "cards";
  // Offered when this machine's window came back empty or short (nothing more to load).
  const short = s.status === "ready" && s.cursor === null && s.groups.length < ARCHIVE_OFFER_BELOW;
  // Deep Search is offered under every settled page, first when the page is empty: words
  // of build and test errors live in tool output, which message search never holds.
  const deepOffer = props.onDeep && s.status === "ready" && html`
    <button type="button" class="btn link deep-link" onClick=${props.onDeep}>
      Search tool output too</button>
  `;
  const archiveLink = ((archive && (archive.active || short)) || deepOffer) && html`
    <p class="archive-offer">
      ${archive && (archive.active || short) && html`
        <button type="button" class="btn link archive-link" data-archive=${String(archive.active)}
          onClick=${archive.toggle}>${archive.active
            ? "Back to recent sessions"
            : "Search the archive"}</button>
      `}
      ${deepOffer}
    </p>
  `;

  return html`
    <section class="lane" aria-labelledby="lane-msg-h" aria-busy=${String(busy)}
      data-q=${q} data-key=${laneKey(s.shownQuery)} data-state=${s.status}
      data-degraded=${String(s.degraded?.count ?? 0)}>
        <div class="lane-head">
          <h2 id="lane-msg-h">Messages</h2>
          <span class="lane-status" role="status">${statusText(s)}</span>
          ${onSort &&
            html`<${SortToggle} sort=${sort} onSort=${onSort} unavailable=${sortUnavailable} />`}
        </div>
        ${archive?.active && html`<p class="archive-label" role="note">${ARCHIVE_LABEL}</p>`}
        ${s.building && html`<${Notice} tone="warn" text=${BUILDING} />`}
        ${notice}
        ${s.error && html`<${Notice} tone="error" text=${s.error} action=${retry} />`}
        ${onlyCommon && html`<p class="empty only-common" role="note">${ONLY_COMMON_TEXT}</p>`}
        ${empty &&
          html`
            <${LaneEmpty} complete=${emptyComplete} suggestions=${s.suggestions}
              onWiden=${onWiden} />
          `}
        <ul class=${listClass} role="list" aria-label="Sessions with matching messages">
          ${s.groups.flatMap((g, i) => i === firstRelated ? [divider, card(g)] : [card(g)])}
        </ul>
        ${more}
        ${archiveLink}
      </section>
  `;
}
