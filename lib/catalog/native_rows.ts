/**
 * session.jsonl events → detail rows, one pass in file order, with the extractor's era
 * rules (the epoch marker splits legacy from new; without one, any canonical
 * conversation_message row makes the whole file new-era).
 * Twins render once: an assistant conversation_message row renders nothing (its
 * diagnostic model_response twin is the row, and lends it the seq); new-era
 * session_started/steer_delivered/info lines are diagnostics of canonical user rows.
 * Legacy user text comes from session_started tasks, delivered steers and
 * "Round N follow-up:" info lines: the native-era rules of session_log/native_era.ts,
 * which the extractor and the transcript rebuild read too. Commands render once, as
 * tool calls of their turn's assistant row or of a `tool_calls` row (native_tools.ts):
 * agent_input, approvals that let a command run, command_started/finished and
 * agent_output make no rows of their own. context_snapshot events are compact rows (the
 * sidecar may be rotated away; hydration says). Rows are light: sidecar text and command
 * output are only named here (`span`, `files`) and read for the returned page. Original
 * `ts` is kept in `detail.ts`; ts_ms is inferred from the meta's created_at for legacy
 * events that lack it (`detail.ts_inferred`).
 * This whole-spine build is the REFERENCE: the daemon pages through the spine index
 * (spine_index_build.ts learns these rules one line at a time, native_page.ts derives a
 * shown row from its line with the same PLAIN table), and spine_index_test.ts holds the
 * two equal on fuzzed spines. A rule changed here must change there too.
 */
import {
  createEpochInferrer,
  type EpochInferrer,
  isLegacyAt,
  legacyFollowUp,
  legacyTaskText,
  type LogEvent,
  nativeEraOf,
  type ReadEvent,
} from "../session_log/mod.ts";
import { type ApprovalFold, foldApprovals, type NativeTool, ToolGroups } from "./native_tools.ts";

/** A row before paging. */
export interface NativeRow {
  kind: string;
  ts_ms: number | null;
  line: number;
  role?: "user" | "assistant";
  text?: string;
  seq?: number;
  superseded?: boolean;
  detail: Record<string, unknown>;
  /** Assistant text to read: a sidecar span (len null: to the end of the file). */
  span?: { file: string; offset: number; len: number | null };
  /** The tool calls of this row's turn (assistant message or tool_calls rows). */
  tools?: NativeTool[];
}

type Data = Record<string, unknown>;
type RowFn = (kind: string, extra?: Partial<NativeRow>, more?: Data) => NativeRow;
/** Events that only feed tool calls (native_tools.ts): they render no row of their own. */
export const TOOL_EVENTS: ReadonlySet<string> = new Set([
  "agent_input",
  "command_started",
  "command_finished",
  "agent_output",
]);
const num = (v: unknown): number | undefined => (typeof v === "number" ? v : undefined);
const str = (v: unknown): string | undefined => (typeof v === "string" ? v : undefined);

/** Index of the epoch marker, or -1; and whether the file has any canonical row. */
export function eraOf(events: readonly ReadEvent[]): { epochAt: number; canonical: boolean } {
  return nativeEraOf(events);
}

/** Rows that need no state: kind, shown text and detail fields per event name. */
export const PLAIN: Record<string, (ev: LogEvent, d: Data) => [string, string | undefined, Data]> =
  {
    human_question: (_, d) => ["question", str(d.question), pick(d, ["question_id"])],
    human_response_sent: (_, d) => ["answer", undefined, pick(d, ["question_id"])],
    approval: (_, d) => [
      "approval",
      str(d.command),
      { ...pick(d, ["approval_id", "kind"]), state: "requested" },
    ],
    approval_resolved: (_, d) => [
      "approval",
      undefined,
      { ...pick(d, ["approval_id", "by"]), state: d.decision },
    ],
    auto_approved: (_, d) => [
      "approval",
      str(d.command),
      { ...pick(d, ["approval_id", "reason"]), state: "auto" },
    ],
    context_snapshot: (ev, d) => [
      "context_snapshot",
      undefined,
      {
        ...pick(d, ["tokens", "item_count", "labels", "source", "session_id", "stream"]),
        file: ev.file,
      },
    ],
    conversation_rewound: (
      _,
      d,
    ) => ["cut", undefined, pick(d, ["cut_after_seq", "kind", "superseded_at_ms"])],
    error: (ev, d) => ["error", ev.message ?? str(d.error), { event: ev.event }],
    crash: (ev, d) => ["error", ev.message ?? str(d.error), { event: ev.event }],
    warning: (ev, d) => ["warning", ev.message ?? str(d.reason), { event: ev.event }],
    log_dir_fallback: (ev, d) => ["warning", ev.message ?? str(d.reason), { event: ev.event }],
    session_end: (
      _,
      d,
    ) => ["session_end", undefined, pick(d, ["status", "turns", "duration_ms", "reason"])],
  };

/** One pass over a session's events. */
class RowBuilder {
  readonly rows: NativeRow[] = [];
  #twinSeq = new Map<string, number>();
  #steers = new Map<string, string>();
  #started = 0;
  #infer: EpochInferrer | null;
  readonly tools = new ToolGroups();
  #approvals: ApprovalFold;

  constructor(
    events: readonly ReadEvent[],
    readonly metaTask: string | null,
    createdAtMs: number | null,
  ) {
    this.#infer = createdAtMs === null ? null : createEpochInferrer(createdAtMs);
    this.#approvals = foldApprovals(events);
    // An assistant row's seq lives on its canonical twin, written after the model_response.
    for (const { event: ev } of events) {
      const d = (ev.data ?? {}) as Data;
      const seq = num(d.message_seq);
      if (
        ev.event === "conversation_message" && d.role === "assistant" && ev.file &&
        seq !== undefined
      ) {
        this.#twinSeq.set(`${ev.file}@${num(d.model_offset) ?? 0}`, seq);
      }
    }
  }

  add(ev: LogEvent, line: number, legacy: boolean, index: number): void {
    const d = (ev.data ?? {}) as Data;
    let ts_ms = ev.ts_ms ?? null;
    const base: Data = { ts: ev.ts };
    if (ts_ms === null && this.#infer) {
      // Legacy events carry only a time of day; the inferrer must see every one, in order.
      ts_ms = this.#infer.infer(ev.ts);
      if (ts_ms !== null) base.ts_inferred = true;
    }
    const row = (kind: string, extra: Partial<NativeRow> = {}, more: Data = {}): NativeRow => {
      const r: NativeRow = { kind, ts_ms, line, ...extra, detail: { ...base, ...more } };
      this.rows.push(r);
      return r;
    };
    if (this.#approvals.folded.has(index)) return;
    if (TOOL_EVENTS.has(ev.event)) {
      const approval = this.#approvals.byStart.get(index);
      const turn = ev.turn === undefined ? {} : { turn: ev.turn };
      return this.tools.event(ev, { ts_ms, approval }, () => row("tool_calls", {}, turn));
    }
    const plain = Object.hasOwn(PLAIN, ev.event) ? PLAIN[ev.event] : undefined;
    if (plain) {
      const [kind, text, more] = plain(ev, d);
      row(kind, text === undefined ? {} : { text }, more);
    } else if (ev.event === "model_response" || ev.event === "conversation_message") {
      this.#message(ev, d, row);
    } else this.#other(ev, d, legacy, row);
  }

  #message(ev: LogEvent, d: Data, row: RowFn) {
    if (ev.event === "conversation_message") {
      // User rows carry the only copy of the raw text: they render. Assistant rows don't.
      if (d.role === "user" && typeof d.text === "string") {
        const seq = num(d.message_seq);
        row(
          "message",
          { role: "user", text: d.text, seq },
          pick(d, ["provenance", "ref_seq", "message_seq"]),
        );
      }
      return;
    }
    if (!ev.file) return;
    const offset = num(d.model_offset) ?? 0;
    const r = row("message", {
      role: "assistant",
      seq: this.#twinSeq.get(`${ev.file}@${offset}`),
      span: { file: ev.file, offset, len: num(d.model_bytes) ?? null },
    }, { file: ev.file, has_tool_calls: d.has_tool_calls });
    this.tools.message(ev.turn, r);
  }

  #other(
    ev: LogEvent,
    d: Data,
    legacy: boolean,
    row: RowFn,
  ): void {
    const user = (text: string, more: Data) => row("message", { role: "user", text }, more);
    switch (ev.event) {
      case "session_started": {
        this.#started++;
        row(
          "session_start",
          {},
          pick(d, ["provider", "model", "autonomy", "round", "resumed", "task"]),
        );
        const task = legacyTaskText(ev, {
          firstStarted: this.#started === 1,
          metaTask: this.metaTask,
        });
        if (legacy && task) user(task, { provenance: "task" });
        return;
      }
      case "steer_requested":
        if (typeof d.steer_id === "string") this.#steers.set(d.steer_id, str(d.text) ?? "");
        return void row("steer", { text: str(d.text) }, pick(d, ["steer_id"]));
      case "steer_delivered": {
        const text = typeof d.steer_id === "string" ? this.#steers.get(d.steer_id) : undefined;
        if (legacy && text !== undefined) user(text, { provenance: "steer", steer_id: d.steer_id });
        return;
      }
      case "info": {
        const f = legacy ? legacyFollowUp(ev.message) : null;
        if (f) user(f.text, { provenance: "follow_up", round: f.round });
        return;
      }
    }
  }
}

/** Builds the rows of one session. */
export function buildNativeRows(
  events: readonly ReadEvent[],
  o: { createdAtMs: number | null; metaTask: string | null },
): NativeRow[] {
  const { epochAt, canonical } = eraOf(events);
  const b = new RowBuilder(events, o.metaTask, o.createdAtMs);
  events.forEach(({ event, lineNo }, i) =>
    b.add(event, lineNo, isLegacyAt({ epochAt, canonical }, i), i)
  );
  b.tools.finish();
  return b.rows;
}

/** The defined fields `keys` of `d`. */
export function pick(d: Data, keys: string[]): Data {
  const out: Data = {};
  for (const k of keys) if (d[k] !== undefined) out[k] = d[k];
  return out;
}

/**
 * Flags message rows cut by a later rollback: a cut row supersedes every EARLIER message
 * row whose seq > cut_after_seq (seqs are never reused, so a later row is never cut).
 */
export function applyCuts(rows: NativeRow[]): void {
  for (let i = 0; i < rows.length; i++) {
    const cut = rows[i]!;
    const after = cut.kind === "cut" ? num(cut.detail.cut_after_seq) : undefined;
    if (after === undefined) continue;
    for (let j = 0; j < i; j++) {
      const r = rows[j]!;
      if (r.kind === "message" && r.seq !== undefined && r.seq > after) r.superseded = true;
    }
  }
}
