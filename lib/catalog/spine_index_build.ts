/**
 * Builds a SpineIndex one event at a time, with native_rows.ts's rules (and
 * native_tools.ts's grouping), so an appended spine extends the index instead of
 * rebuilding it. What native_rows decides from the WHOLE spine is learnt incrementally:
 *  - an assistant row's seq lives on its canonical twin, written after it: rows wait in
 *    `#modelRows` and take the seq when the twin comes (a later twin overrides);
 *  - approval events make rows until their command starts, then those rows are hidden
 *    (spine_approvals.ts);
 *  - tool-call fallbacks and superseded flags are decided when a page is derived
 *    (native_page.ts), from the stored groups and cuts.
 * The era (legacy vs new, eraOf) is the one rule a later line can change for earlier
 * lines: the first canonical row makes every earlier line new-era, the first epoch marker
 * makes every earlier line legacy. When that would change a row already made (or one
 * not made), `feed` answers "restart": the caller rebuilds from the first line with the
 * era it now knows — at most twice per spine, since each fact is learnt once.
 */
import {
  createEpochInferrer,
  type EpochInferrer,
  legacyFollowUp,
  legacyTaskText,
  type LogEvent,
} from "../session_log/mod.ts";
import { PLAIN, TOOL_EVENTS } from "./native_rows.ts";
import { ApprovalFold } from "./spine_approvals.ts";
import { mapBytes } from "./spine_columns.ts";
import { FLAG, KIND, type SpineIndex, textHash, VARIANT } from "./spine_index.ts";

type Data = Record<string, unknown>;
const num = (v: unknown): number | undefined => (typeof v === "number" ? v : undefined);
const str = (v: unknown): string | undefined => (typeof v === "string" ? v : undefined);

/** What is known of the era before a build starts (a restart knows more). */
export interface EraFacts {
  /** Ordinal of the first epoch marker, when known. */
  epoch: number | null;
  /** Some conversation_message exists. */
  canonical: boolean;
}

/** Inputs a build depends on besides the spine (a change means a rebuild). */
export interface BuildInputs {
  sessionId: string;
  createdAtMs: number | null;
  metaTask: string | null;
}

/** The incremental builder of one index. */
export class SpineIndexBuilder {
  readonly era: EraFacts;
  #infer: EpochInferrer | null;
  #fold: ApprovalFold;
  /** Twin key (see #key) → seq; model_response rows by twin key. */
  #twinSeq = new Map<number | string, number>();
  #modelRows = new Map<number | string, number | number[]>();
  /** Sidecar names interned for twin keys (a session has one per turn at most). */
  #files = new Map<string, number>();
  #steers = new Map<string, { ev: number; hash: number }>();
  #open = new Map<number, number>();
  #running = new Map<string, number[]>();
  #started = 0;
  /** Rows only the legacy era makes / lines that would make one if they were legacy. */
  #legacyRows = 0;
  #legacyCandidates = 0;
  /** A pre-marker row's seq changed after the epoch mapping was applied. */
  correlationDirty = false;

  constructor(readonly idx: SpineIndex, readonly inputs: BuildInputs, era: EraFacts) {
    this.era = { ...era };
    this.#infer = inputs.createdAtMs === null ? null : createEpochInferrer(inputs.createdAtMs);
    this.#fold = new ApprovalFold(idx);
  }

  /** Estimated bytes of the builder's own state (kept with a cached index). */
  get bytes(): number {
    let n = this.#fold.bytes + (this.#twinSeq.size + this.#modelRows.size) * 40 +
      mapBytes(this.#files) + mapBytes(this.#steers, 48) + this.#open.size * 40;
    for (const v of this.#running.values()) n += 80 + v.length * 8;
    return n;
  }

  /** Takes the next event; "restart" when the era changed under earlier lines. */
  feed(ev: LogEvent, lineNo: number, off: number, len: number): "ok" | "restart" {
    const idx = this.idx;
    const i = idx.evOff.push(off);
    idx.evLen.push(len);
    idx.evLine.push(lineNo);
    const d = (ev.data ?? {}) as Data;
    if (ev.event === "conversation_message_epoch" && idx.epochEv < 0) {
      idx.epochEv = i;
      if (this.era.epoch === null) {
        // Earlier lines were taken as new-era (a canonical row came first): they are legacy.
        if (this.era.canonical && this.#legacyCandidates > 0) {
          this.era.epoch = i;
          return "restart";
        }
        this.era.epoch = i;
      }
    }
    if (ev.event === "conversation_message" && !this.era.canonical) {
      this.era.canonical = true;
      // Without a marker, one canonical row makes the whole file new-era.
      if (this.era.epoch === null && this.#legacyRows > 0) return "restart";
    }
    this.#facts(ev, d, i);
    let ts = ev.ts_ms ?? null;
    let flags = 0;
    if (ts === null && this.#infer) {
      // Legacy events carry only a time of day; the inferrer must see every one, in order.
      ts = this.#infer.infer(ev.ts);
      if (ts !== null) flags |= FLAG.tsInferred;
    }
    const step = this.#fold.step(ev, i);
    for (const row of step.hide) idx.hide(row);
    if (step.folded) return "ok";
    const legacy = this.era.epoch !== null ? i < this.era.epoch : !this.era.canonical;
    const at = { i, ts, flags };
    if (TOOL_EVENTS.has(ev.event)) this.#tool(ev, d, at, step.matched);
    else if (Object.hasOwn(PLAIN, ev.event)) {
      const [kind, text] = PLAIN[ev.event]!(ev, d);
      const row = this.#row(at, KIND[kind]!, VARIANT.plain, 0, text);
      if (step.entry >= 0) this.#fold.setRow(step.entry, row);
      const after = num(d.cut_after_seq);
      if (kind === "cut") idx.cutRows++;
      if (kind === "cut" && after !== undefined) idx.cuts.push({ row, after });
    } else if (ev.event === "conversation_message") {
      if (d.role === "user" && typeof d.text === "string") {
        this.#row(at, KIND.message!, VARIANT.user, FLAG.user, d.text, num(d.message_seq));
      }
    } else if (ev.event === "model_response") this.#assistant(ev, d, at);
    else this.#other(ev, d, at, legacy);
    return "ok";
  }

  /** Facts kept whole-spine: twins, canonical seqs, parent, replay status. */
  #facts(ev: LogEvent, d: Data, i: number): void {
    const idx = this.idx;
    const seq = num(d.message_seq);
    if (ev.event === "conversation_message") {
      if (seq !== undefined) {
        idx.canonEv.push(i);
        idx.canonSeq.push(seq);
      }
      if (d.role === "assistant" && ev.file && seq !== undefined) {
        this.#twin(this.#key(ev.file, num(d.model_offset) ?? 0), seq);
      }
    } else if (ev.event === "session_started") {
      if (idx.firstStarted < 0) idx.firstStarted = i;
      if (typeof d.provider === "string") idx.provider = d.provider;
      if (typeof d.model === "string") idx.model = d.model;
      if (typeof d.autonomy === "string") idx.autonomy = d.autonomy;
    } else if (
      ev.event === "session_relationship" && d.child_id === this.inputs.sessionId &&
      typeof d.parent_id === "string"
    ) {
      idx.parent = d.parent_id;
    }
  }

  /**
   * A twin key: `${file}@${offset}` as native_rows keys twins, as one number when it fits
   * (interned file × 2^32 + offset) — a Map entry per assistant message stays ~40 bytes.
   */
  #key(file: string, offset: number): number | string {
    let f = this.#files.get(file);
    if (f === undefined) this.#files.set(file, f = this.#files.size);
    return Number.isInteger(offset) && offset >= 0 && offset < 2 ** 32 && f < 2 ** 20
      ? f * 2 ** 32 + offset
      : `${file}@${offset}`;
  }

  #twin(key: number | string, seq: number): void {
    this.#twinSeq.set(key, seq);
    const rows = this.#modelRows.get(key);
    if (rows === undefined) return;
    for (const r of typeof rows === "number" ? [rows] : rows) {
      this.idx.rowSeq.set(r, seq);
      if (this.idx.epochEv >= 0 && this.idx.rowEv.at(r) < this.idx.epochEv) {
        this.correlationDirty = true;
      }
    }
  }

  #row(
    at: { i: number; ts: number | null; flags: number },
    kind: number,
    variant: number,
    flags: number,
    text?: string,
    seq?: number,
  ): number {
    const idx = this.idx;
    const r = idx.rowEv.push(at.i);
    idx.rowKind.push(kind);
    idx.rowVariant.push(variant);
    idx.rowFlags.push(at.flags | flags | (text === undefined ? 0 : FLAG.hasText));
    idx.rowTs.push(at.ts ?? NaN);
    idx.rowSeq.push(seq ?? NaN);
    idx.rowGroup.push(-1);
    idx.rowHash.push(text === undefined ? 0 : textHash(text));
    if (kind === KIND.message) idx.messageCount++;
    return r;
  }

  #assistant(ev: LogEvent, d: Data, at: { i: number; ts: number | null; flags: number }): void {
    if (!ev.file) return;
    const offset = num(d.model_offset) ?? 0;
    const key = this.#key(ev.file, offset);
    const r = this.#row(at, KIND.message!, VARIANT.assistant, FLAG.assistant | FLAG.hasText);
    this.idx.rowSeq.set(r, this.#twinSeq.get(key) ?? NaN);
    this.idx.rowHash.set(r, textHash(`${ev.file}@${offset}`));
    const have = this.#modelRows.get(key);
    this.#modelRows.set(
      key,
      have === undefined ? r : typeof have === "number" ? [have, r] : [...have, r],
    );
    this.#group(ev.turn, r);
  }

  #other(
    ev: LogEvent,
    d: Data,
    at: { i: number; ts: number | null; flags: number },
    legacy: boolean,
  ): void {
    const idx = this.idx;
    switch (ev.event) {
      case "session_started": {
        this.#started++;
        this.#row(at, KIND.session_start!, VARIANT.sessionStart, 0);
        const first = this.#started === 1;
        const task = legacyTaskText(ev, { firstStarted: first, metaTask: this.inputs.metaTask });
        if (!task) return;
        if (!legacy) return void this.#legacyCandidates++;
        this.#legacyRows++;
        const flags = FLAG.user | (first ? FLAG.firstStarted : 0);
        this.#row(at, KIND.message!, VARIANT.task, flags, task);
        return;
      }
      case "steer_requested":
        if (typeof d.steer_id === "string") {
          this.#steers.set(d.steer_id, { ev: at.i, hash: textHash(str(d.text) ?? "") });
        }
        this.#row(at, KIND.steer!, VARIANT.steer, 0, str(d.text));
        return;
      case "steer_delivered": {
        const ref = typeof d.steer_id === "string" ? this.#steers.get(d.steer_id) : undefined;
        if (ref === undefined) return;
        if (!legacy) return void this.#legacyCandidates++;
        this.#legacyRows++;
        const r = this.#row(at, KIND.message!, VARIANT.steerDelivered, FLAG.user, "");
        idx.rowHash.set(r, ref.hash);
        idx.steerRef.set(r, ref.ev);
        return;
      }
      case "info": {
        const f = legacyFollowUp(ev.message);
        if (!f) return;
        if (!legacy) return void this.#legacyCandidates++;
        this.#legacyRows++;
        this.#row(at, KIND.message!, VARIANT.followUp, FLAG.user, f.text);
        return;
      }
    }
  }

  /** A new tool group owned by row `r` (the turn's latest assistant row or tool_calls row). */
  #group(turn: number | undefined, r: number): number {
    const idx = this.idx;
    const g = idx.groupRow.push(r);
    idx.groupFirst.push(-1);
    idx.groupLast.push(-1);
    idx.groupBatch.push(-1);
    idx.groupBatchTs.push(NaN);
    idx.groupOutput.push(-1);
    idx.groupOutputTs.push(NaN);
    idx.rowGroup.set(r, g);
    this.#open.set(turn ?? -1, g);
    return g;
  }

  #tool(
    ev: LogEvent,
    d: Data,
    at: { i: number; ts: number | null; flags: number },
    approval: number,
  ): void {
    const idx = this.idx;
    let g = this.#open.get(ev.turn ?? -1);
    if (g === undefined) {
      g = this.#group(ev.turn, this.#row(at, KIND.tool_calls!, VARIANT.toolCalls, 0));
    }
    switch (ev.event) {
      case "agent_input":
        if (idx.groupBatch.at(g) < 0) {
          idx.groupBatch.set(g, at.i);
          idx.groupBatchTs.set(g, at.ts ?? NaN);
        }
        return;
      case "command_started": {
        const c = this.#call(g, at.i, -1, at.ts, approval);
        const key = `${g}\n${str(d.nonce) ?? ""}`;
        const q = this.#running.get(key);
        if (q) q.push(c);
        else this.#running.set(key, [c]);
        return;
      }
      case "command_finished": {
        const key = `${g}\n${str(d.nonce) ?? ""}`;
        const q = this.#running.get(key);
        const c = q?.shift();
        if (q && q.length === 0) this.#running.delete(key);
        if (c === undefined) this.#call(g, -1, at.i, at.ts, -1);
        else idx.callFinish.set(c, at.i);
        return;
      }
      case "agent_output":
        idx.groupOutput.set(g, at.i);
        idx.groupOutputTs.set(g, at.ts ?? NaN);
    }
  }

  #call(g: number, start: number, finish: number, ts: number | null, approval: number): number {
    const idx = this.idx;
    const c = idx.callNext.push(-1);
    idx.callStart.push(start);
    idx.callFinish.push(finish);
    idx.callTs.push(ts ?? NaN);
    idx.callApproval.push(approval);
    const last = idx.groupLast.at(g);
    if (last < 0) idx.groupFirst.set(g, c);
    else idx.callNext.set(last, c);
    idx.groupLast.set(g, c);
    return c;
  }
}
