/**
 * What the message lane says when a page holds no group. "No matches" is a claim about the
 * whole index, so only a complete answer (ready, nothing partial, degraded or still
 * building) makes it; anything less says it searched only part. A complete empty page
 * offers only the widenings the server counted by running them (`suggestions`: rewound
 * messages, all sources, all roles), each with what it would find, as a button that turns
 * it on; without any it says plainly that nothing matches. It never offers a filter that
 * would find nothing (it used to suggest "Include rewound messages" on every empty result).
 */
import { html } from "htm/preact";
import type { SearchSuggestion, SearchSuggestions } from "../api_client.ts";
import { plural } from "../lib/format.ts";
import type { ListState } from "../lib/route.ts";

/** A change of the search model that widens the search. */
export type Widening = Partial<Pick<ListState, "includeSuperseded" | "sources" | "roles">>;

/** Props of {@link LaneEmpty}. */
export interface LaneEmptyProps {
  /** The page is complete (see the module header). */
  complete: boolean;
  suggestions: SearchSuggestions | null;
  onWiden(w: Widening): void;
}

const OFFERS: [keyof SearchSuggestions, string, Widening][] = [
  ["include_superseded", "Include rewound messages", { includeSuperseded: true }],
  ["all_sources", "Search all sources", { sources: [] }],
  ["all_roles", "All roles", { roles: [] }],
];

/** "finds 3 sessions", "finds 20+ sessions". */
export function findsText(s: SearchSuggestion): string {
  return s.more
    ? `finds ${s.sessions.toLocaleString()}+ sessions`
    : `finds ${plural(s.sessions, "session")}`;
}

/** The empty state. */
export function LaneEmpty({ complete, suggestions, onWiden }: LaneEmptyProps) {
  if (!complete) {
    return html`<p class="empty">No matches in the part of the index searched so far.</p>`;
  }
  const offers = OFFERS.flatMap(([k, label, widen]) => {
    const s = suggestions?.[k];
    if (!s || s.sessions < 1) return [];
    return [html`
      <li><button type="button" class="btn small" data-widen=${k}
        onClick=${() => onWiden(widen)}>${label}: ${findsText(s)}</button></li>
    `];
  });
  if (!offers.length) return html`<p class="empty">No matches in the whole index.</p>`;
  return html`
    <div class="empty lane-empty">
      <p>No matches with the current filters.</p>
      <ul class="widen" role="list" aria-label="Widen the search">${offers}</ul>
    </div>
  `;
}
