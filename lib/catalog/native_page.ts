/**
 * A native session as the detail view pages it: the spine index (spine_index.ts) plus
 * the open handle its lines are read through. A row is derived when it is shown, from
 * its own line (and, for a legacy delivered steer, the line of its request; for tool
 * calls, the lines of their command events and approvals) by the very rules
 * native_rows.ts / native_tools.ts apply to the whole spine: `PLAIN`, `pick` and the
 * grouping fallbacks are shared, so a derived row is the row the whole-spine build makes.
 * What only the whole spine knows comes from the index: time (inferred in order), seq
 * (twin, or the epoch mapping), hidden approvals, groups and cuts (superseded).
 * A line that no longer parses (the file was rewritten under a reader) derives a row
 * with its kind and line only: the next request rebuilds the index.
 */
import { legacyFollowUp, type LogEvent } from "../session_log/mod.ts";
import { type NativeRow, pick, PLAIN } from "./native_rows.ts";
import type { NativeTool } from "./native_tools.ts";
import type { Refusal, SafeFile } from "./safe_fs.ts";
import { approvalFacts } from "./spine_approvals.ts";
import { FLAG, ROW_KINDS, SpineIndex, VARIANT } from "./spine_index.ts";
import { LineReader, SPINE_MAX_BYTES } from "./spine_read.ts";
import type { SpineEntry } from "./spine_cache.ts";

type Data = Record<string, unknown>;
const num = (v: unknown): number | undefined => (typeof v === "number" ? v : undefined);
const str = (v: unknown): string | undefined => (typeof v === "string" ? v : undefined);
const nul = (v: number): number | null => (Number.isNaN(v) ? null : v);

/** One native session's spine, ready to page. */
export class NativeSpine {
  readonly index: SpineIndex;
  readonly #reader: LineReader | null;
  readonly #metaTask: string | null;

  constructor(
    readonly dir: string,
    h: { file: SafeFile | null; refused: Refusal | null; entry: SpineEntry | null },
  ) {
    this.index = h.entry?.index ?? new SpineIndex();
    this.#reader = h.file ? new LineReader(h.file) : null;
    this.#metaTask = h.entry?.inputs.metaTask ?? null;
    this.refused = h.refused;
    this.size = h.entry?.size ?? 0;
  }

  /** The meta's task the index was built with (legacy rows fall back to it). */
  get metaTask(): string | null {
    return this.#metaTask;
  }

  /** Why session.jsonl could not be read ("missing" for a fresh dir), or null. */
  readonly refused: Refusal | null;
  /** Spine size the index was checked against. */
  readonly size: number;

  /** The index stopped before the end (SPINE_MAX_BYTES or the entry caps). */
  get truncated(): boolean {
    return this.index.stopped !== null;
  }

  /** Rows shown, the `log_truncated` row included. */
  get total(): number {
    return this.index.visibleRows + (this.truncated ? 1 : 0);
  }

  /** The parsed event of ordinal `ev`. */
  async event(ev: number): Promise<LogEvent | null> {
    if (!this.#reader || ev < 0 || ev >= this.index.events) return null;
    return await this.#reader.event(this.index.evOff.at(ev), this.index.evLen.at(ev));
  }

  /** Rows [offset, offset + n) as native_rows.ts builds them (tools included). */
  async rows(offset: number, n: number): Promise<NativeRow[]> {
    const out: NativeRow[] = [];
    for (let v = offset; v < Math.min(this.total, offset + n); v++) out.push(await this.row(v));
    return out;
  }

  /** Visible row `v`; `tools: false` skips reading its tool calls. */
  async row(v: number, o: { tools?: boolean } = {}): Promise<NativeRow> {
    if (v === this.index.visibleRows && this.truncated) return this.#truncatedRow();
    return await this.physicalRow(this.index.physOf(v), o);
  }

  /** Physical row `p` (see {@link row}). */
  async physicalRow(p: number, o: { tools?: boolean } = {}): Promise<NativeRow> {
    const idx = this.index;
    const r = await this.#derive(p);
    const g = idx.rowGroup.at(p);
    if (g >= 0 && o.tools !== false) {
      const tools = await this.#tools(g);
      if (tools.length) r.tools = tools;
    }
    return r;
  }

  /** The seq of physical row `p` (twin, line, or epoch mapping), or undefined. */
  seqOf(p: number): unknown {
    const idx = this.index;
    if (idx.corrSeq.has(p)) return idx.corrSeq.get(p);
    return nul(idx.rowSeq.at(p)) ?? undefined;
  }

  /** True when visible row `v` shows text (an inline text or a sidecar span). */
  hasText(v: number): boolean {
    if (v >= this.index.visibleRows) return false;
    return (this.index.rowFlags.at(this.index.physOf(v)) & FLAG.hasText) !== 0;
  }

  /** The row native_detail.ts appended past SPINE_MAX_BYTES (here: past the entry caps too). */
  #truncatedRow(): NativeRow {
    const idx = this.index;
    const read = idx.stopped === "bytes" ? Math.min(this.size, SPINE_MAX_BYTES) : idx.indexed;
    return {
      kind: "log_truncated",
      ts_ms: null,
      line: idx.lineCount,
      detail: { read_bytes: read, size: this.size },
    };
  }

  async #derive(p: number): Promise<NativeRow> {
    const idx = this.index;
    const e = idx.rowEv.at(p);
    const kind = ROW_KINDS[idx.rowKind.at(p)]!;
    const line = idx.evLine.at(e);
    const ts_ms = nul(idx.rowTs.at(p));
    const ev = await this.event(e);
    if (!ev) return { kind, ts_ms, line, detail: {} };
    const d = (ev.data ?? {}) as Data;
    const base: Data = { ts: ev.ts };
    const flags = idx.rowFlags.at(p);
    if (flags & FLAG.tsInferred) base.ts_inferred = true;
    const row = (extra: Partial<NativeRow>, more: Data = {}): NativeRow => {
      const r: NativeRow = { kind, ts_ms, line, ...extra, detail: { ...base, ...more } };
      if (kind === "message") this.#superseded(p, r);
      return r;
    };
    const user = (text: string | undefined, more: Data) =>
      row({ role: "user", text, ...this.#corr(p) }, more);
    switch (idx.rowVariant.at(p)) {
      case VARIANT.plain: {
        const [, text, more] = PLAIN[ev.event]!(ev, d);
        return row(text === undefined ? {} : { text }, more);
      }
      case VARIANT.user:
        return row(
          { role: "user", text: str(d.text), seq: num(d.message_seq), ...this.#corr(p) },
          pick(d, ["provenance", "ref_seq", "message_seq"]),
        );
      case VARIANT.assistant:
        return row({
          role: "assistant",
          seq: this.seqOf(p) as number | undefined,
          span: {
            file: ev.file!,
            offset: num(d.model_offset) ?? 0,
            len: num(d.model_bytes) ?? null,
          },
        }, { file: ev.file, has_tool_calls: d.has_tool_calls });
      case VARIANT.sessionStart:
        return row({}, pick(d, ["provider", "model", "autonomy", "round", "resumed", "task"]));
      case VARIANT.task: {
        const first = (flags & FLAG.firstStarted) !== 0;
        const task = str(d.task) ?? ev.message ?? (first ? this.#metaTask : null) ?? undefined;
        return user(task, { provenance: "task" });
      }
      case VARIANT.steer:
        return row({ text: str(d.text) }, pick(d, ["steer_id"]));
      case VARIANT.steerDelivered: {
        const req = await this.event(idx.steerRef.get(p) ?? -1);
        const text = str((req?.data as Data | undefined)?.text) ?? "";
        return user(text, { provenance: "steer", steer_id: d.steer_id });
      }
      case VARIANT.followUp: {
        const f = legacyFollowUp(ev.message);
        return user(f?.text, { provenance: "follow_up", round: Number(f?.round) });
      }
      default:
        return row({}, ev.turn === undefined ? {} : { turn: ev.turn });
    }
  }

  /** A legacy row's seq from the epoch mapping, when it has one. */
  #corr(p: number): Partial<NativeRow> {
    return this.index.corrSeq.has(p) ? { seq: this.index.corrSeq.get(p) as number } : {};
  }

  /** applyCuts for one row: a LATER cut whose cut_after_seq is below its seq supersedes it. */
  #superseded(p: number, r: NativeRow): void {
    if (r.seq === undefined) return;
    for (const c of this.index.cuts) {
      if (c.row > p && r.seq > c.after) {
        r.superseded = true;
        return;
      }
    }
  }

  /** The tool calls of group `g`, with native_tools.ts's fallbacks. */
  async #tools(g: number): Promise<NativeTool[]> {
    const idx = this.index;
    const calls: NativeTool[] = [];
    for (let c = idx.groupFirst.at(g); c >= 0; c = idx.callNext.at(c)) {
      calls.push(await this.#call(c));
    }
    if (calls.length) return calls;
    const batch = await this.event(idx.groupBatch.at(g));
    const batchTs = nul(idx.groupBatchTs.at(g));
    const output = await this.event(idx.groupOutput.at(g));
    if (output) {
      const d = (output.data ?? {}) as Data;
      const files: Record<string, string> = {};
      if (output.file) files.stdout = output.file;
      if (output.file2) files.stderr = output.file2;
      const codes = Array.isArray(d.exit_codes)
        ? d.exit_codes.filter((c): c is number => typeof c === "number")
        : [];
      return [{
        name: "shell",
        input: batch ? batch.message ?? "" : "",
        ts_ms: (batch ? batchTs : null) ?? nul(idx.groupOutputTs.at(g)),
        status: codes.some((c) => c !== 0) ? "error" : "ok",
        exit_code: codes.length === 1 ? codes[0] : undefined,
        files,
        detail: clean({ batch: true, exit_codes: codes.length > 1 ? codes : undefined }),
      }];
    }
    if (batch) {
      return [{
        name: "shell",
        input: batch.message ?? "",
        ts_ms: batchTs,
        status: "pending",
        files: {},
        detail: clean({ nonces: (batch.data as Data | undefined)?.nonces }),
      }];
    }
    return [];
  }

  async #call(c: number): Promise<NativeTool> {
    const idx = this.index;
    const start = await this.event(idx.callStart.at(c));
    const finish = await this.event(idx.callFinish.at(c));
    const sd = (start?.data ?? {}) as Data;
    const fd = (finish?.data ?? {}) as Data;
    let approval: Data | undefined;
    const a = idx.callApproval.at(c);
    if (a >= 0) {
      const events: LogEvent[] = [];
      for (let e = idx.apprHead.at(a); e >= 0; e = idx.apprNext.at(e)) {
        const ev = await this.event(idx.apprEv.at(e));
        if (ev) events.push(ev);
      }
      approval = approvalFacts(events);
    }
    const call: NativeTool = {
      name: "shell",
      input: start ? str(sd.exec) ?? "" : "",
      ts_ms: nul(idx.callTs.at(c)),
      status: "pending",
      files: {},
      detail: start
        ? clean({ nonce: str(sd.nonce), pty: sd.pty === true, approval })
        : clean({ nonce: str(fd.nonce) }),
    };
    if (finish) {
      const exit = num(fd.exit_code);
      call.exit_code = exit ?? null;
      call.status = exit === 0 ? "ok" : "error";
      const duration = num(fd.duration_ms);
      if (duration !== undefined) call.duration_ms = duration;
      for (
        const [key, label] of [["stdout_log", "stdout"], ["stderr_log", "stderr"], [
          "pty_log",
          "pty",
        ]] as const
      ) {
        const rel = str(fd[key]);
        if (rel) call.files[label] = rel;
      }
    }
    return call;
  }
}

function clean(d: Data): Data {
  const out: Data = {};
  for (const [k, v] of Object.entries(d)) if (v !== undefined) out[k] = v;
  return out;
}
