/**
 * A native session's commands as tool calls of the turn that made them (spec: replay
 * with full-audit semantics). The runner writes each command several ways — the turn's
 * `agent_input` batch (agent_in.json), `approval` + `auto_approved`, `command_started`
 * and `command_finished` (runtime logs), and the turn's `agent_output` (stdout.txt: the
 * same output concatenated) — and the detail view shows it ONCE: one call per
 * command_started/command_finished pair, its approval folded in, its output named by
 * the runtime logs (read for the returned page only).
 *
 * Grouping is prefix-stable, so a live session's earlier rows never move: tool events
 * join the latest assistant message row of their turn that precedes them; with none yet
 * (a turn with no prose, or tools before the prose), the first tool event opens a
 * `tool_calls` row of its own, which later tool events of that turn join. Events with no
 * turn group under one turn-less key. Fallbacks, decided per group once the whole spine
 * is read: no command events but an `agent_output` (logs before command_finished
 * existed) → one call whose output is the turn's stdout.txt/stderr.txt; only an
 * `agent_input` (cut off before any command ran) → one pending call named by the batch
 * summary. A command_finished without its command_started is still a call (input "").
 */
import type { LogEvent, ReadEvent } from "../session_log/mod.ts";

type Data = Record<string, unknown>;
const num = (v: unknown): number | undefined => (typeof v === "number" ? v : undefined);
const str = (v: unknown): string | undefined => (typeof v === "string" ? v : undefined);

/** A tool call before hydration (output files are named, not read). */
export interface NativeTool {
  name: string;
  input: string;
  ts_ms: number | null;
  status: "ok" | "error" | "pending";
  exit_code?: number | null;
  duration_ms?: number;
  /** Output files to excerpt, by label. */
  files: Record<string, string>;
  detail: Data;
}

/** Approval events that render no row of their own: they live on the command they let run. */
export interface ApprovalFold {
  /** Indices into the events array. */
  folded: Set<number>;
  /** command_started event index → the approval's facts. */
  byStart: Map<number, Data>;
}

/**
 * A first-in-first-out queue per key whose `take` skips (for good) the entries that can
 * never be taken: every entry is passed over at most once, so pairing stays linear even
 * on a spine written to defeat it (a million denied approvals of one command).
 */
class Queues<T> {
  #q = new Map<string, { items: T[]; head: number }>();
  push(key: string, item: T): void {
    const q = this.#q.get(key);
    if (q) q.items.push(item);
    else this.#q.set(key, { items: [item], head: 0 });
  }
  take(key: string, usable: (item: T) => boolean = () => true): T | undefined {
    const q = this.#q.get(key);
    if (!q) return undefined;
    while (q.head < q.items.length) {
      const item = q.items[q.head++]!;
      if (usable(item)) return item;
    }
    return undefined;
  }
}

interface OpenApproval {
  id: string;
  facts: Data;
  events: number[];
}

/**
 * Pairs approvals with the command_started that follows them (same turn, same command
 * text, first come first served — the runner asks, then runs, one command at a time).
 * A denied or never-started approval keeps its rows.
 */
export function foldApprovals(events: readonly ReadEvent[]): ApprovalFold {
  const folded = new Set<number>();
  const byStart = new Map<number, Data>();
  const byId = new Map<string, OpenApproval>();
  const queue = new Queues<OpenApproval>();
  const matched = new Map<string, OpenApproval>();
  const slot = (ev: LogEvent, command: string) => `${ev.turn ?? -1}\n${command}`;
  events.forEach(({ event: ev }, i) => {
    const d = (ev.data ?? {}) as Data;
    const id = str(d.approval_id);
    if (ev.event === "approval" || ev.event === "auto_approved") {
      const command = str(d.command);
      if (id === undefined || command === undefined) return;
      const known = byId.get(id) ?? matched.get(id);
      const auto = ev.event === "auto_approved";
      if (known) {
        if (auto) Object.assign(known.facts, { state: "auto", reason: str(d.reason) });
        known.events.push(i);
        if (matched.has(id)) folded.add(i);
        return;
      }
      const open: OpenApproval = {
        id,
        facts: auto ? { state: "auto", reason: str(d.reason) } : { state: "requested" },
        events: [i],
      };
      byId.set(id, open);
      queue.push(slot(ev, command), open);
    } else if (ev.event === "approval_resolved" && id !== undefined) {
      const known = byId.get(id) ?? matched.get(id);
      if (!known) return;
      Object.assign(known.facts, { state: str(d.decision), by: str(d.by) });
      known.events.push(i);
      if (matched.has(id)) folded.add(i);
    } else if (ev.event === "command_started" && typeof d.exec === "string") {
      // A denied approval never lets a command run: passed over for good.
      const open = queue.take(slot(ev, d.exec), (o) => o.facts.state !== "denied");
      if (!open) return;
      byId.delete(open.id);
      matched.set(open.id, open);
      byStart.set(i, open.facts);
      for (const e of open.events) folded.add(e);
    }
  });
  return { folded, byStart };
}

interface Call extends NativeTool {
  nonce?: string;
}

interface Group {
  row: { tools?: NativeTool[] };
  calls: Call[];
  /** Started calls awaiting their command_finished, by nonce, in start order. */
  running: Queues<Call>;
  batch?: { summary: string; nonces: unknown; ts_ms: number | null };
  output?: { files: Record<string, string>; exitCodes: number[]; ts_ms: number | null };
}

/** Where one tool event happened. */
export interface ToolEventAt {
  ts_ms: number | null;
  /** The approval folded into this command_started, if any. */
  approval?: Data;
}

/** The tool-call groups of one pass over a session's events (see the module header). */
export class ToolGroups {
  #open = new Map<number, Group>();
  #all: Group[] = [];

  /** An assistant message row of `turn`: later tool events of that turn attach to it. */
  message(turn: number | undefined, row: { tools?: NativeTool[] }): void {
    const g: Group = { row, calls: [], running: new Queues() };
    this.#open.set(turn ?? -1, g);
    this.#all.push(g);
  }

  /**
   * Takes one tool event (agent_input, command_started, command_finished, agent_output).
   * `openRow` makes (and places) a `tool_calls` row when the turn has no group yet.
   */
  event(ev: LogEvent, at: ToolEventAt, openRow: () => { tools?: NativeTool[] }): void {
    const key = ev.turn ?? -1;
    let g = this.#open.get(key);
    if (!g) {
      g = { row: openRow(), calls: [], running: new Queues() };
      this.#open.set(key, g);
      this.#all.push(g);
    }
    const d = (ev.data ?? {}) as Data;
    switch (ev.event) {
      case "agent_input":
        g.batch ??= { summary: ev.message ?? "", nonces: d.nonces, ts_ms: at.ts_ms };
        return;
      case "command_started": {
        const call: Call = {
          name: "shell",
          input: str(d.exec) ?? "",
          ts_ms: at.ts_ms,
          status: "pending",
          files: {},
          detail: clean({ nonce: str(d.nonce), pty: d.pty === true, approval: at.approval }),
          nonce: str(d.nonce),
        };
        g.calls.push(call);
        return g.running.push(call.nonce ?? "", call);
      }
      case "command_finished":
        return finish(g, d, at.ts_ms);
      case "agent_output": {
        const files: Record<string, string> = {};
        if (ev.file) files.stdout = ev.file;
        if (ev.file2) files.stderr = ev.file2;
        const codes = Array.isArray(d.exit_codes)
          ? d.exit_codes.filter((c): c is number => typeof c === "number")
          : [];
        g.output = { files, exitCodes: codes, ts_ms: at.ts_ms };
      }
    }
  }

  /** Gives every group's row its calls (fallbacks decided now that the spine is read). */
  finish(): void {
    for (const g of this.#all) {
      const tools: NativeTool[] = g.calls.length
        ? g.calls.map(({ nonce: _n, ...t }) => t)
        : g.output
        ? [batchOutput(g)]
        : g.batch
        ? [{
          name: "shell",
          input: g.batch.summary,
          ts_ms: g.batch.ts_ms,
          status: "pending",
          files: {},
          detail: clean({ nonces: g.batch.nonces }),
        }]
        : [];
      if (tools.length) g.row.tools = tools;
    }
  }
}

/** command_finished → the earliest unfinished call with its nonce (else a call of its own). */
function finish(g: Group, d: Data, ts_ms: number | null): void {
  const nonce = str(d.nonce);
  let call = g.running.take(nonce ?? "");
  if (!call) {
    call = {
      name: "shell",
      input: "",
      ts_ms,
      status: "pending",
      files: {},
      detail: clean({ nonce }),
      nonce,
    };
    g.calls.push(call);
  }
  const exit = num(d.exit_code);
  call.exit_code = exit ?? null;
  call.status = exit === 0 ? "ok" : "error";
  const duration = num(d.duration_ms);
  if (duration !== undefined) call.duration_ms = duration;
  for (
    const [key, label] of [["stdout_log", "stdout"], ["stderr_log", "stderr"], ["pty_log", "pty"]]
  ) {
    const rel = str(d[key!]);
    if (rel) call.files[label!] = rel;
  }
}

/** The legacy fallback: the turn's whole output as one call. */
function batchOutput(g: Group): NativeTool {
  const { files, exitCodes, ts_ms } = g.output!;
  const failed = exitCodes.some((c) => c !== 0);
  return {
    name: "shell",
    input: g.batch?.summary ?? "",
    ts_ms: g.batch?.ts_ms ?? ts_ms,
    status: failed ? "error" : "ok",
    exit_code: exitCodes.length === 1 ? exitCodes[0] : undefined,
    files,
    detail: clean({ batch: true, exit_codes: exitCodes.length > 1 ? exitCodes : undefined }),
  };
}

function clean(d: Data): Data {
  const out: Data = {};
  for (const [k, v] of Object.entries(d)) if (v !== undefined) out[k] = v;
  return out;
}
