/**
 * The native extractor's event interpreter: turns session.jsonl events into records and
 * marks for one era at a time. New era: conversation_message rows are canonical (user
 * text inline, assistant text as a turns/ sidecar span) and conversation_rewound becomes
 * a SeqCut. Legacy era (before the lane): user text from session_started tasks (meta task
 * as fallback), delivered steers (steer_requested joined with steer_delivered on id) and
 * "Round N follow-up:" info lines; assistant text from model_response sidecar spans;
 * timestamps inferred from created_at + time of day. Legacy records are correlated to
 * seqs through the epoch marker's [seq, role, hash16] mapping, so later cuts cover them.
 */
import { contentHash16 } from "../../../conversation/mod.ts";
import { refusalOf } from "../../../durable/mod.ts";
import {
  createEpochInferrer,
  type EpochInferState,
  legacyFollowUp,
  legacyTaskText,
  type LogEvent,
  readSessionSpan,
} from "../../../session_log/mod.ts";
import {
  capText,
  type MessageRecord,
  RECORD_TEXT_CAP_BYTES,
  type SupersessionMark,
} from "../../record.ts";
import { hash16Of, type Locator } from "../../locator.ts";
import { countSkip } from "../framework/plugin.ts";

/** Longest sidecar span hashed for a locator (mint and verify must agree). */
export const SPAN_HASH_MAX_BYTES = 1024 * 1024;
/** Pending legacy steers kept (a steer is delivered within a turn or two). */
const MAX_PENDING_STEERS = 256;

/** Persisted carry-over between incremental reads. */
export interface NativeState {
  v: 1;
  era: "legacy" | "new";
  created_at_ms: number;
  infer: EpochInferState | null;
  steers: Record<string, { text: string; line: number }>;
  started_seen: number;
  parent: string | null;
}

/** Working context for one pass over a run of events. */
export interface EventPass {
  dir: string;
  sessionId: string;
  metaTask: string | null;
  state: NativeState;
  records: MessageRecord[];
  marks: SupersessionMark[];
  nextOrder: number;
  skipped: Record<string, number>;
  /** Epoch mapping entries not yet matched to a legacy record. */
  mapping: [number, string, string][];
}

/** Starts a pass. */
export function newPass(
  d: Omit<EventPass, "records" | "marks" | "skipped" | "mapping"> & {
    mapping?: [number, string, string][];
  },
): EventPass {
  return { ...d, records: [], marks: [], skipped: {}, mapping: d.mapping ?? [] };
}

function tsOf(p: EventPass, ev: LogEvent): number {
  if (ev.ts_ms !== undefined) return ev.ts_ms;
  const inf = createEpochInferrer(p.state.created_at_ms, p.state.infer ?? undefined);
  const ms = inf.infer(ev.ts);
  p.state.infer = inf.state();
  return ms ?? p.state.created_at_ms;
}

function push(
  p: EventPass,
  r:
    & Omit<
      MessageRecord,
      "order" | "source" | "session_id" | "generation" | "subagent" | "text" | "truncated"
    >
    & { text: string },
): void {
  const capped = capText(r.text);
  p.records.push({
    ...r,
    text: capped.text,
    truncated: capped.truncated,
    source: "intendant",
    session_id: p.sessionId,
    order: p.nextOrder++,
    generation: 0,
    subagent: false,
  });
}

/** Reads a sidecar span, capped for the record and hashed over a bounded prefix. */
function readSpan(
  p: EventPass,
  file: string,
  offset: number,
  len: number,
): { text: string; hash: string } | null {
  try {
    const bytes = readSessionSpan(
      p.dir,
      file,
      offset,
      Math.min(len, Math.max(SPAN_HASH_MAX_BYTES, RECORD_TEXT_CAP_BYTES + 4)),
    );
    return {
      text: new TextDecoder().decode(
        bytes.subarray(0, Math.min(bytes.length, RECORD_TEXT_CAP_BYTES + 4)),
      ),
      hash: hash16Of(bytes.subarray(0, Math.min(bytes.length, SPAN_HASH_MAX_BYTES))),
    };
  } catch (err) {
    // A missing or refused sidecar loses this record only; it is counted. A hard link is
    // counted on its own: it is a planted file, not a damaged one (reliability F1).
    if (!(err instanceof Error)) throw err;
    countSkip(p.skipped, refusalOf(err) === "hardlinked" ? "hardlinked" : "sidecar_unreadable");
    return null;
  }
}

/** A Message.seq the record and locator schemas accept: a non-negative safe integer. */
export function isSeq(v: unknown): v is number {
  return typeof v === "number" && Number.isSafeInteger(v) && v >= 0;
}

/** Assigns a seq to a legacy record through the epoch mapping (first unmatched equal entry). */
function correlate(p: EventPass, role: string, text: string): number | undefined {
  if (p.mapping.length === 0) return undefined;
  const h = contentHash16(text);
  const i = p.mapping.findIndex(([, r, mh]) => r === role && mh === h);
  if (i < 0) return undefined;
  const [seq] = p.mapping.splice(i, 1)[0]!;
  return seq;
}

/** Interprets one new-era event. */
export function newEraEvent(p: EventPass, ev: LogEvent, line: number): void {
  const d = (ev.data ?? {}) as Record<string, unknown>;
  if (ev.event === "conversation_rewound") {
    if (isSeq(d.cut_after_seq)) {
      p.marks.push({ kind: "seq_cut", after_order: p.nextOrder, cut_after_seq: d.cut_after_seq });
    } else countSkip(p.skipped, "bad_rewound_row");
    return;
  }
  if (
    ev.event === "session_relationship" && d.child_id === p.sessionId &&
    typeof d.parent_id === "string"
  ) {
    p.state.parent = d.parent_id;
    return;
  }
  if (ev.event !== "conversation_message") return;
  const seq = d.message_seq;
  // Not just typeof "number": -1, 1.5 or 1e308 would fail the record schema and make the
  // store reject the whole shard, so one hostile line would hide every message.
  if (!isSeq(seq)) return countSkip(p.skipped, "bad_message_row");
  if (d.role === "user" && typeof d.text === "string") {
    const loc: Locator = {
      v: 1,
      kind: "native_message_id",
      message_seq: seq,
      line,
      hash: hash16Of(capText(d.text).text),
    };
    push(p, { id: `m:${seq}`, role: "user", ts_ms: tsOf(p, ev), text: d.text, locator: loc, seq });
  } else if (
    d.role === "assistant" && ev.file && typeof d.model_offset === "number" &&
    typeof d.model_bytes === "number"
  ) {
    const span = readSpan(p, ev.file, d.model_offset, d.model_bytes);
    if (!span) return;
    const loc: Locator = {
      v: 1,
      kind: "native_message_id",
      message_seq: seq,
      line,
      hash: hash16Of(capText(span.text).text),
    };
    push(p, {
      id: `m:${seq}`,
      role: "assistant",
      ts_ms: tsOf(p, ev),
      text: span.text,
      locator: loc,
      seq,
    });
  } else countSkip(p.skipped, "bad_message_row");
}

/** Interprets one legacy-era event. */
export function legacyEvent(p: EventPass, ev: LogEvent, line: number): void {
  const d = (ev.data ?? {}) as Record<string, unknown>;
  const user = (text: string, ts: number, locLine: number) => {
    const loc: Locator = { v: 1, kind: "native_event", line: locLine, hash: hash16Of(text) };
    push(p, {
      id: `e:${line}`,
      role: "user",
      ts_ms: ts,
      text,
      locator: loc,
      seq: correlate(p, "user", text),
    });
  };
  switch (ev.event) {
    case "session_started": {
      p.state.started_seen++;
      const text = legacyTaskText(ev, {
        firstStarted: p.state.started_seen === 1,
        metaTask: p.metaTask,
      });
      if (text) user(text, tsOf(p, ev), line);
      return;
    }
    case "steer_requested":
      if (typeof d.steer_id === "string" && typeof d.text === "string") {
        const keys = Object.keys(p.state.steers);
        if (keys.length >= MAX_PENDING_STEERS) delete p.state.steers[keys[0]!];
        p.state.steers[d.steer_id] = { text: d.text, line };
      }
      return;
    case "steer_delivered": {
      const s = typeof d.steer_id === "string" ? p.state.steers[d.steer_id] : undefined;
      if (!s) return;
      delete p.state.steers[d.steer_id as string];
      // The text lives on the requested line; the locator points there.
      user(s.text, tsOf(p, ev), s.line);
      return;
    }
    case "info": {
      const f = legacyFollowUp(ev.message);
      if (f) user(f.text, tsOf(p, ev), line);
      return;
    }
    case "model_response": {
      if (!ev.file) return;
      const offset = typeof d.model_offset === "number" ? d.model_offset : 0;
      let len = typeof d.model_bytes === "number" ? d.model_bytes : -1;
      if (len < 0) {
        try {
          len = Deno.statSync(`${p.dir}/${ev.file}`).size - offset;
        } catch (err) {
          if (!(err instanceof Error)) throw err;
          return countSkip(p.skipped, "sidecar_unreadable");
        }
      }
      const span = readSpan(p, ev.file, offset, len);
      if (!span || span.text.length === 0) return;
      const loc: Locator = {
        v: 1,
        kind: "native_sidecar_span",
        file: ev.file,
        offset,
        len,
        line,
        hash: span.hash,
      };
      push(p, {
        id: `s:${ev.file}:${offset}`,
        role: "assistant",
        ts_ms: tsOf(p, ev),
        text: span.text,
        locator: loc,
        seq: correlate(p, "assistant", span.text),
      });
      return;
    }
  }
}
