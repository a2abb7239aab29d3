/**
 * Private to query/: record and entry builders shared by the unit tests beside the code
 * (a test module imported by another would register its tests twice).
 */
import type { MessageRecord } from "../record.ts";
import { buildShardEntry, type ShardEntry } from "./shard_entry.ts";

/** A record with just enough fields for the arena. */
export function rec(i: number, text: string, o: Partial<MessageRecord> = {}): MessageRecord {
  return {
    id: `r${i}`,
    source: "pi",
    session_id: "s",
    role: i % 2 ? "assistant" : "user",
    ts_ms: 1_000 + i,
    text,
    truncated: false,
    locator: {
      v: 1,
      kind: "external_record_id",
      record_id: `r${i}`,
      file: "f.jsonl",
      hash: "0".repeat(16),
    },
    order: i,
    generation: 0,
    subagent: false,
    ...o,
  };
}

/** A resident entry over `texts` (one record each, in order). */
export function entryOf(texts: string[]): ShardEntry {
  const records = texts.map((t, i) => rec(i, t));
  return buildShardEntry("0".repeat(16) + ".json", {
    schema: 1,
    parser_version: 1,
    key: "pi:s",
    records,
    marks: [],
  });
}
