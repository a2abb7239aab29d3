/**
 * ActivityRow → DetailEntry. A `tool_calls` entry carries its calls in `tools` (the same
 * shape a message entry's tools have) and says in `detail.by` whether the agent or the
 * user ran them; a `context_snapshot` entry carries the marker's facts in `detail`
 * (`kind`: compacted | context_compacted | compact_boundary | compaction | clear |
 * branch_summary; `summary` as an output excerpt when the format records one) and no
 * `text`: a summary is not prose. Both name their source file and line.
 */
import type { DetailEntry } from "../types.ts";
import type { ActivityRow } from "./types.ts";

/** The entry of row `r` at position `index` of the full list. */
export function activityEntry(r: ActivityRow, index: number): DetailEntry {
  const e: DetailEntry = {
    index,
    kind: r.kind,
    ts_ms: r.ts_ms,
    superseded: r.superseded,
    subagent: r.subagent,
    line: r.line,
  };
  if (r.kind === "tool_calls") {
    e.tools = r.tools;
    e.detail = { file: r.file, by: r.by };
  } else e.detail = { file: r.file, ...r.detail };
  return e;
}
