/**
 * Private to message_search unit tests (query/ and store/): record and entry builders shared by the tests beside the code
 * (a test module imported by another would register its tests twice).
 */
import type { MessageRecord } from "../record.ts";
import { decodeSegment, encodeSegment, SEGMENT_SCHEMA, type SegmentView } from "../store/mod.ts";
import type { BlockView } from "./match.ts";

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

/** A resident entry over `texts` (one record each, in order), encoded and decoded. */
export function entryOf(texts: string[]): SegmentView {
  const records = texts.map((t, i) => rec(i, t));
  const e = encodeSegment({
    schema: SEGMENT_SCHEMA,
    parser_version: 1,
    key: "pi:s",
    records,
    marks: [],
  });
  return decodeSegment(e.bytes, e.name);
}

/** Every block of `e` as match.ts sees it. */
export function blocksOf(e: SegmentView): BlockView[] {
  return Array.from({ length: e.blockCount }, (_, b) => ({
    text: e.blockText(b),
    first: e.blockFirst(b),
    last: e.blockEnd(b),
    recStart: e.foldStart,
    recEnd: e.foldEnd,
  }));
}
