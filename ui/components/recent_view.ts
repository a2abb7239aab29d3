/**
 * The home view: the quick-search toolbar, the coverage bar, and either the recent
 * sessions (empty query) or the two search lanes — the immediate metadata lane over
 * loaded sessions, and under it the full-text message lane (when this daemon offers it
 * and the page did not turn it off). Stays mounted while a detail is open, so going back
 * keeps the query, the results and the scroll position.
 */
import { html } from "htm/preact";
import type { Ref } from "preact";
import { useMemo } from "preact/hooks";
import type { SessionsModel } from "../hooks/use_sessions.ts";
import { useSearchLane } from "../hooks/use_search_lane.ts";
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
  const summaries = useMemo(() => new Map(sessions.sessions.map((s) => [s.key, s])), [
    sessions.sessions,
  ]);
  const onRenamed = (key: string, name: string | null) => sessions.patch(key, { name });
  const messages = messageLane && html`
    <${MessageLane} lane=${lane} summaries=${summaries}
      includeSuperseded=${search.includeSuperseded} onRenamed=${onRenamed} />
  `;
  const body = q
    ? html`<${MetadataLane} sessions=${sessions.sessions} q=${q} onRenamed=${onRenamed} />
      ${messages}`
    : html`<${SessionList} model=${sessions} onRenamed=${onRenamed} />`;

  return html`<div class="view" hidden=${hidden}>
    <${SearchToolbar} model=${search} onChange=${onSearch} messageLane=${messageLane}
      inputRef=${inputRef} />
    <${CoverageBar} />
    ${body}
  </div>`;
}
