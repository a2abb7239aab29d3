/**
 * One pass over a Kimi session's wire operations: merges the agents' wires into one
 * source order, mints records, and replays each agent's in-context history so that
 * `context.undo` becomes ONE exact `record_ids` mark.
 *
 * Invariants:
 * - Record ids are `<agent>:L<line>` (agent = the wire's directory under agents/, or
 *   "main@root" for a legacy root wire.jsonl): the same bytes always mint the same id,
 *   ids never collide across agents (uuids such as "s1" repeat per agent), and an
 *   in-place protocol migration (1:1 per line) keeps them.
 * - Order = a k-way merge of the wires by record time (ties: file order), which keeps
 *   each wire's own line order, so a later line never gets a lower order than an
 *   earlier line of the same wire. Appended lines are newer than what was read before,
 *   so an incremental append orders exactly as a full parse would.
 * - Undo replays agent/context `undo()` [src: packages/agent-core/src/agent/context]:
 *   walking back from the tail it removes entries until N real user inputs are gone,
 *   keeps `injection` entries, and stops at a compaction summary. A step entry carries
 *   the assistant prose folded into it, so replies go with their prompt. `clear` empties
 *   the history (undo cannot reach behind it); compaction keeps the entries past
 *   `compactedCount` behind a summary entry. Neither supersedes anything by itself.
 * - [unc] kimi-code defers messages appended during an open tool exchange until the
 *   results arrive; we keep wire order. That only moves a non-prose tool entry relative
 *   to a message, so the prose an undo removes is the same.
 */
import { capText, type MessageRecord, type SupersessionMark } from "../../record.ts";
import { hash16Of } from "../../locator.ts";
import type { EntryClass, WireOp } from "./kimi_wire.ts";

/** An operation with its 1-based line and effective time (own `time`, else carried). */
export interface TimedOp {
  line: number;
  time: number;
  op: WireOp;
}

/** One agent wire's operations for this pass. */
export interface AgentOps {
  /** Id qualifier (see header). */
  agent: string;
  subagent: boolean;
  /** The wire path relative to the home root (locator `file`). */
  rel: string;
  ops: TimedOp[];
}

/** What a pass produced. */
export interface PassResult {
  records: MessageRecord[];
  marks: SupersessionMark[];
  /** The first main-agent user prose of this pass (title fallback). */
  firstUser: string | null;
}

interface Entry {
  cls: EntryClass;
  ids: string[];
}

interface AgentContext {
  history: Entry[];
  steps: Map<string, Entry>;
}

/** Runs a pass; record orders start at `nextOrder`. */
export function runKimiPass(
  files: readonly AgentOps[],
  o: { sessionId: string; nextOrder: number },
): PassResult {
  const out: PassResult = { records: [], marks: [], firstUser: null };
  const ctx = new Map<string, AgentContext>();
  let order = o.nextOrder;
  const heads = files.map(() => 0);
  for (;;) {
    let pick = -1;
    for (let i = 0; i < files.length; i++) {
      const op = files[i]!.ops[heads[i]!];
      if (op === undefined) continue;
      if (pick < 0 || op.time < files[pick]!.ops[heads[pick]!]!.time) pick = i;
    }
    if (pick < 0) break;
    const file = files[pick]!;
    const t = file.ops[heads[pick]!++]!;
    let agent = ctx.get(file.agent);
    if (!agent) ctx.set(file.agent, agent = { history: [], steps: new Map() });
    const emit = (role: "user" | "assistant", text: string): string => {
      const id = `${file.agent}:L${t.line}`;
      const capped = capText(text);
      out.records.push({
        id,
        source: "kimi",
        session_id: o.sessionId,
        role,
        ts_ms: t.time,
        text: capped.text,
        truncated: capped.truncated,
        locator: {
          v: 1,
          kind: "external_record_id",
          record_id: id,
          file: file.rel,
          hash: hash16Of(capped.text),
        },
        order: order++,
        generation: 0,
        subagent: file.subagent,
      });
      if (role === "user" && !file.subagent && out.firstUser === null) out.firstUser = text;
      return id;
    };
    const ids = applyOp(agent, t.op, emit);
    if (ids !== null && ids.length > 0) {
      out.marks.push({ kind: "record_ids", after_order: order, ids });
    }
  }
  return out;
}

/** Applies one operation to an agent's history; returns the ids an undo removed. */
function applyOp(
  a: AgentContext,
  op: WireOp,
  emit: (role: "user" | "assistant", text: string) => string,
): string[] | null {
  switch (op.kind) {
    case "msg":
      a.history.push({ cls: op.cls, ids: op.text === null ? [] : [emit("user", op.text)] });
      return null;
    case "step": {
      const entry: Entry = { cls: "other", ids: [] };
      a.history.push(entry);
      a.steps.set(op.uuid, entry);
      return null;
    }
    case "step_end":
      a.steps.delete(op.uuid);
      return null;
    case "part": {
      const id = emit("assistant", op.text);
      const step = op.stepUuid === null ? undefined : a.steps.get(op.stepUuid);
      // kimi-code folds a part into its open step; a part without one (never written by
      // kimi-code itself) still needs an entry so that an undo can take it.
      if (step) step.ids.push(id);
      else a.history.push({ cls: "other", ids: [id] });
      return null;
    }
    case "tool":
      a.history.push({ cls: "other", ids: [] });
      return null;
    case "clear":
      a.history = [];
      a.steps.clear();
      return null;
    case "compact": {
      const kept = op.count === null ? [] : a.history.slice(op.count);
      a.history = [{ cls: "summary", ids: [] }, ...kept];
      a.steps.clear();
      return null;
    }
    case "undo":
      return undo(a, op.count);
  }
}

/** agent/context `undo(count)`: removes from the tail until `count` real user inputs are gone. */
function undo(a: AgentContext, count: number): string[] {
  const removed = new Set<number>();
  let real = 0;
  for (let i = a.history.length - 1; i >= 0; i--) {
    const e = a.history[i]!;
    if (e.cls === "injection") continue;
    if (e.cls === "summary") break;
    removed.add(i);
    if (e.cls === "real" && ++real >= count) break;
  }
  const ids: string[] = [];
  const kept: Entry[] = [];
  a.history.forEach((e, i) => {
    if (removed.has(i)) ids.push(...e.ids);
    else kept.push(e);
  });
  a.history = kept;
  // kimi-code clears open steps on undo: a late part starts its own entry.
  a.steps.clear();
  return ids;
}
