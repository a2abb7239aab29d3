/**
 * The home view: the quick-search toolbar, the coverage bar, and either the recent
 * sessions (empty query) or the two search lanes — the full-text message lane first (when
 * this daemon offers it and the page did not turn it off: message hits are what a query is
 * usually after, and they used to start below the fold under a screenful of title
 * matches), then the session filter (server-side, over the whole catalog), which shows no
 * box at all when it has nothing. While a query is shown the coverage bar is one line
 * (expandable), so the first hit is on the first screen. Stays mounted while a detail is
 * open, so going back keeps the query, the results and the scroll position.
 * ArrowDown/ArrowUp move through the results (lib/result_nav.ts). Team scope (only when the daemon has a team): the
 * message lane searches the team database, its cards name their machine and open the
 * remote session; the metadata lane is hidden then, because it filters this machine's
 * catalog, which is not what a team search asks about. The message lane's order (issue 27,
 * "Best match | Newest") is the search model's `sort`; team scope keeps the preference but
 * searches newest first (the team reader cannot rank yet) and the switch says so.
 * Deep scope (`scope=deep`, from the lane's "Search tool output too") replaces both lanes
 * with the Deep Search lane (deep_lane.ts) for the same query.
 */
import { html } from "htm/preact";
import type { Ref } from "preact";
import { useMemo } from "preact/hooks";
import { useCoverage } from "../hooks/use_coverage.ts";
import type { SearchSort } from "../api_client.ts";
import type { SessionsModel } from "../hooks/use_sessions.ts";
import type { TeamInfo } from "../hooks/use_team.ts";
import { useSearchLane } from "../hooks/use_search_lane.ts";
import { useDeepSearch } from "../hooks/use_deep_search.ts";
import { onResultsKeyDown } from "../lib/result_nav.ts";
import { withoutScope, withSort } from "../lib/route.ts";
import type { LaneQuery } from "../lib/search_lane.ts";
import { CoverageBar } from "./coverage_bar.ts";
import { DeepLane } from "./deep_lane.ts";
import { VaultNotice } from "./vault_notice.ts";
import type { Widening } from "./lane_empty.ts";
import { MessageLane } from "./message_lane.ts";
import { MetadataLane } from "./metadata_lane.ts";
import { type SearchModel, SearchToolbar } from "./search_toolbar.ts";
import { SessionList } from "./session_list.ts";

/** Message-lane session groups per page. */
export const LANE_PAGE = 20;

/** Why the switch's Best match is disabled in team scope. */
export const TEAM_SORT_UNAVAILABLE = "Best match is not available for team search yet";

/** Props of {@link RecentView}. */
export interface RecentViewProps {
  hidden: boolean;
  sessions: SessionsModel;
  search: SearchModel;
  onSearch(next: SearchModel): void;
  messageLane: boolean;
  inputRef: Ref<HTMLInputElement>;
  /** The daemon's team; null: none (the view is the local dashboard, unchanged). */
  team?: TeamInfo | null;
}

/** The view. */
export function RecentView(props: RecentViewProps) {
  const { hidden, sessions, search, onSearch, messageLane, inputRef, team = null } = props;
  const q = search.q.trim();
  const teamScope = team !== null && search.scope === "team";
  const archiveScope = search.scope === "archive";
  const deepScope = !teamScope && search.scope === "deep";
  const deep = useDeepSearch(deepScope && q.length >= 2 ? q : null);
  const laneQuery: LaneQuery | null = messageLane && q && !deepScope
    ? {
      q,
      includeSuperseded: search.includeSuperseded,
      source: search.sources,
      role: search.roles,
      ...(teamScope ? { scope: "team" as const, machines: search.machines ?? [] } : {}),
      ...(archiveScope ? { scope: "archive" as const } : {}),
      ...(!teamScope && search.sort === "relevance" ? { sort: "relevance" as const } : {}),
    }
    : null;
  const lane = useSearchLane(laneQuery, LANE_PAGE);
  // One poller feeds both the coverage bar and the toolbar's source chips.
  const cov = useCoverage();
  const summaries = useMemo(() => new Map(sessions.sessions.map((s) => [s.key, s])), [
    sessions.sessions,
  ]);
  const clearSources = () => onSearch({ ...search, sources: [] });
  const widen = (w: Widening) => onSearch({ ...search, ...w });
  const messages = messageLane && html`
    <${MessageLane} lane=${lane} summaries=${summaries} onWiden=${widen}
      sort=${search.sort ?? "newest"} onSort=${(v: SearchSort) => onSearch(withSort(search, v))}
      sortUnavailable=${teamScope ? TEAM_SORT_UNAVAILABLE : null}
      archive=${teamScope ? null : {
        active: archiveScope,
        toggle: () =>
          onSearch(archiveScope ? withoutScope(search) : { ...search, scope: "archive" }),
      }}
      onDeep=${teamScope ? null : () => onSearch({ ...withoutScope(search), scope: "deep" })} />
  `;
  const metadata = !teamScope && html`
    <${MetadataLane} q=${q} sources=${search.sources} standalone=${!messageLane} />
  `;
  const deepLane = html`
    <${DeepLane} model=${deep} onLeave=${() => onSearch(withoutScope(search))} />
  `;
  const body = q ? (deepScope ? deepLane : html`${messages} ${metadata}`) : html`
    <${SessionList} model=${sessions} sources=${search.sources}
      onClearSources=${clearSources} />
  `;

  return html`
    <div class="view" hidden=${hidden}>
      <${SearchToolbar} model=${search} onChange=${onSearch} messageLane=${messageLane}
        inputRef=${inputRef} coverage=${cov.coverage} team=${team} />
      <${VaultNotice} />
      <${CoverageBar} coverage=${cov.coverage} error=${cov.error} compact=${q !== ""} />
      <div class="results" onKeyDown=${onResultsKeyDown}>${body}</div>
    </div>
  `;
}
