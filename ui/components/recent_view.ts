/**
 * The home view: the quick-search toolbar, the coverage bar, and either the recent
 * sessions (empty query) or the two search lanes — the session filter (server-side, over
 * the whole catalog) and under it the full-text message lane (when this daemon offers it
 * and the page did not turn it off). Stays mounted while a detail is open, so going back
 * keeps the query, the results and the scroll position. ArrowDown/ArrowUp move through
 * the results (lib/result_nav.ts).
 */
import { html } from "htm/preact";
import type { Ref } from "preact";
import { useMemo } from "preact/hooks";
import { useCoverage } from "../hooks/use_coverage.ts";
import type { SessionsModel } from "../hooks/use_sessions.ts";
import { useSearchLane } from "../hooks/use_search_lane.ts";
import { onResultsKeyDown } from "../lib/result_nav.ts";
import type { LaneQuery } from "../lib/search_lane.ts";
import { CoverageBar } from "./coverage_bar.ts";
import { MessageLane } from "./message_lane.ts";
import { MetadataLane } from "./metadata_lane.ts";
import { type SearchModel, SearchToolbar } from "./search_toolbar.ts";
import { SessionList } from "./session_list.ts";

/** Message-lane session groups per page. */
export const LANE_PAGE = 20;

/** Props of {@link RecentView}. */
export interface RecentViewProps {
  hidden: boolean;
  sessions: SessionsModel;
  search: SearchModel;
  onSearch(next: SearchModel): void;
  messageLane: boolean;
  inputRef: Ref<HTMLInputElement>;
}

/** The view. */
export function RecentView(props: RecentViewProps) {
  const { hidden, sessions, search, onSearch, messageLane, inputRef } = props;
  const q = search.q.trim();
  const laneQuery: LaneQuery | null = messageLane && q
    ? { q, includeSuperseded: search.includeSuperseded, source: search.sources, role: search.roles }
    : null;
  const lane = useSearchLane(laneQuery, LANE_PAGE);
  // One poller feeds both the coverage bar and the toolbar's source chips.
  const cov = useCoverage();
  const summaries = useMemo(() => new Map(sessions.sessions.map((s) => [s.key, s])), [
    sessions.sessions,
  ]);
  const clearSources = () => onSearch({ ...search, sources: [] });
  const messages = messageLane && html`
    <${MessageLane} lane=${lane} summaries=${summaries}
      includeSuperseded=${search.includeSuperseded} />
  `;
  const body = q ? html`<${MetadataLane} q=${q} sources=${search.sources} /> ${messages}` : html`
    <${SessionList} model=${sessions} sources=${search.sources}
      onClearSources=${clearSources} />
  `;

  return html`
    <div class="view" hidden=${hidden}>
      <${SearchToolbar} model=${search} onChange=${onSearch} messageLane=${messageLane}
        inputRef=${inputRef} coverage=${cov.coverage} />
      <${CoverageBar} coverage=${cov.coverage} error=${cov.error} />
      <div class="results" onKeyDown=${onResultsKeyDown}>${body}</div>
    </div>
  `;
}
