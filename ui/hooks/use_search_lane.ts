/**
 * The message lane as a hook: one createSearchLane controller per component, fed the
 * latest query on every change (the controller debounces, aborts and rejects stale
 * answers), disposed on unmount.
 */
import { useEffect, useRef, useState } from "preact/hooks";
import { searchMessages } from "../api_client.ts";
import {
  createSearchLane,
  IDLE,
  laneKey,
  type LaneQuery,
  type LaneState,
  type SearchLane,
} from "../lib/search_lane.ts";

/** Lane state plus its actions. */
export interface LaneModel {
  state: LaneState;
  loadMore(): void;
  retry(): void;
}

/** Runs `query` (null: nothing to search) with `limit` groups per page. */
export function useSearchLane(query: LaneQuery | null, limit: number): LaneModel {
  const [state, setState] = useState<LaneState>(IDLE);
  const lane = useRef<SearchLane | null>(null);
  if (!lane.current) {
    lane.current = createSearchLane({ limit, search: searchMessages, onChange: setState });
  }
  useEffect(() => () => lane.current?.dispose(), []);
  const key = laneKey(query);
  useEffect(() => lane.current!.set(query), [key]);
  return { state, loadMore: () => lane.current!.loadMore(), retry: () => lane.current!.retry() };
}
