/**
 * Places each source file's activity against the shard's rows. The shard's prose records
 * stay the skeleton — their order, superseded flags, locators and indices are what
 * jump-to-hit uses — and the join only (a) hangs tool calls on record rows and (b) adds
 * `tool_calls` / `context_snapshot` rows between them.
 * Per file, records are mapped to source lines through their locators (lineOf), then
 * records and items are walked together in source order:
 *  - an assistant record opens its turn's attachment point: the calls after it go under
 *    it until a user record, a turn start, a user-run command or a context marker;
 *  - an agent call with no such record before it (a turn with no prose yet, or tools
 *    before the prose) opens a `tool_calls` row, which the calls after it join;
 *  - a user-run command opens (or joins) a `tool_calls` row of its own (`by: "user"`):
 *    the user's shell is not the assistant's turn;
 *  - a context marker is its own row.
 * A new row goes right after the row of the file's last record before it (before the
 * file's first record when none precedes it; by time when the file has no record at
 * all) and takes the file's subagent flag. Its superseded flag is its branch's: in a
 * tree-shaped file (Claude, Pi) that of the nearest record among the row's ancestors (a
 * Pi branch summary sits after the abandoned branch but hangs off the kept one);
 * otherwise that of the file's last record before it (a rolled-back Codex turn's, an
 * undone Kimi turn's tools are rolled back with it). Only records of the file's newest generation are
 * placed: an earlier one (kept beside a Codex in-place rewrite) no longer matches the
 * file's content. Rows added at one place keep file order, then source order. Each call
 * lands in exactly one place.
 */
import type { MessageRecord } from "../../message_search/mod.ts";
import type { ExternalRow } from "../external_detail.ts";
import type { ToolCallEntry } from "../types.ts";
import type { ActivityItem, ActivityRow, FileActivity } from "./types.ts";

/** One read source file, as the join sees it. */
export interface JoinFile {
  /** The path record locators name. */
  rel: string;
  activity: FileActivity;
  subagent: boolean;
  /** The source line a record of this file was minted from, or null. */
  lineOf(rec: MessageRecord): number | null;
}

interface Anchor {
  line: number;
  row: number;
  rec: MessageRecord;
  active: boolean;
}

interface Insert {
  at: number;
  file: number;
  seq: number;
  row: ActivityRow;
}

type ToolRow = Extract<ActivityRow, { kind: "tool_calls" }>;

function locatorFile(rec: MessageRecord): string | null {
  const l = rec.locator;
  return l.kind === "external_record_id" || l.kind === "external_line" ? l.file : null;
}

/** The anchors of file `f`, in source order. */
function anchorsOf(rows: readonly ExternalRow[], f: JoinFile): Anchor[] {
  let gen = -1;
  for (const r of rows) {
    if (r.kind === "record" && locatorFile(r.rec) === f.rel) gen = Math.max(gen, r.rec.generation);
  }
  const out: Anchor[] = [];
  rows.forEach((r, row) => {
    if (r.kind !== "record" || locatorFile(r.rec) !== f.rel || r.rec.generation !== gen) return;
    const line = f.lineOf(r.rec);
    if (line !== null) out.push({ line, row, rec: r.rec, active: r.active });
  });
  return out.sort((a, b) => a.line - b.line || a.row - b.row);
}

/** The first record row stamped after `ts` (the slot for a file with no record). */
function slotByTime(rows: readonly ExternalRow[], ts: number | null): number {
  if (ts === null) return rows.length;
  const i = rows.findIndex((r) => r.kind === "record" && r.rec.ts_ms > ts);
  return i < 0 ? rows.length : i;
}

const itemTs = (it: ActivityItem) =>
  it.kind === "call" ? it.call.ts_ms : it.kind === "snapshot" ? it.ts_ms : null;

/**
 * The superseded flag of the nearest record among `row` and its ancestors, or null when
 * none is found. Memoised per join; the walk is bounded by the parent map's size, so a
 * hostile cycle ends.
 */
function branchFlag(
  f: JoinFile,
  recActive: ReadonlyMap<string, boolean>,
  memo: Map<string, boolean | null>,
  row: string,
): boolean | null {
  const path: string[] = [];
  let id: string | undefined = row;
  let found: boolean | null = null;
  for (let n = 0; id !== undefined && n <= f.activity.parents.size; n++) {
    const known = memo.get(id);
    if (known !== undefined) {
      found = known;
      break;
    }
    const active = recActive.get(id);
    if (active !== undefined) {
      found = !active;
      break;
    }
    path.push(id);
    id = f.activity.parents.get(id);
  }
  for (const p of path) memo.set(p, found);
  return found;
}

/** Walks one file; fills `attached` (record row → calls) and `inserts`. */
function joinFile(
  rows: readonly ExternalRow[],
  f: JoinFile,
  fileIdx: number,
  attached: Map<number, ToolCallEntry[]>,
  inserts: Insert[],
): void {
  const anchors = anchorsOf(rows, f);
  const items = f.activity.items;
  const recActive = new Map<string, boolean>();
  for (const an of anchors) {
    if (an.rec.locator.kind === "external_record_id") {
      recActive.set(an.rec.locator.record_id, an.active);
    }
  }
  const memo = new Map<string, boolean | null>();
  let owner: { row: number } | ToolRow | null = null;
  let last: Anchor | null = null;
  let a = 0;
  let seq = 0;
  const place = (row: ActivityRow, ts: number | null) => {
    const at = last ? last.row + 1 : anchors[0] ? anchors[0].row : slotByTime(rows, ts);
    inserts.push({ at, file: fileIdx, seq: seq++, row });
  };
  const common = (it: ActivityItem) => ({
    superseded: (it.row === undefined ? null : branchFlag(f, recActive, memo, it.row)) ??
      (last ? !last.active : false),
    subagent: f.subagent || (last?.rec.subagent ?? false),
    file: f.rel,
    line: it.pos.line,
  });
  for (const it of items) {
    // Records at or before the item's line come first: an entry's text precedes the
    // tool calls of that same entry (parts 1..), and a record's own line is part 0.
    while (a < anchors.length && anchors[a]!.line <= it.pos.line) {
      last = anchors[a++]!;
      owner = last.rec.role === "assistant" ? { row: last.row } : null;
    }
    if (it.kind === "turn") owner = null;
    else if (it.kind === "snapshot") {
      place(
        { kind: "context_snapshot", ts_ms: it.ts_ms, detail: it.detail, ...common(it) },
        it.ts_ms,
      );
      owner = null;
    } else if (it.by === "agent" && owner && !("kind" in owner)) {
      const list = attached.get(owner.row);
      if (list) list.push(it.call);
      else attached.set(owner.row, [it.call]);
    } else if (owner && "kind" in owner && owner.by === it.by) owner.tools.push(it.call);
    else {
      const row: ToolRow = {
        kind: "tool_calls",
        ts_ms: itemTs(it),
        tools: [it.call],
        by: it.by,
        ...common(it),
      };
      place(row, row.ts_ms);
      owner = row;
    }
  }
}

/** The rows of `rows` with every file's activity placed (see the module header). */
export function joinActivity(
  rows: readonly ExternalRow[],
  files: readonly JoinFile[],
): ExternalRow[] {
  const attached = new Map<number, ToolCallEntry[]>();
  const inserts: Insert[] = [];
  files.forEach((f, i) => joinFile(rows, f, i, attached, inserts));
  inserts.sort((x, y) => x.at - y.at || x.file - y.file || x.seq - y.seq);
  const out: ExternalRow[] = [];
  let k = 0;
  rows.forEach((r, i) => {
    while (k < inserts.length && inserts[k]!.at === i) out.push(inserts[k++]!.row);
    const tools = attached.get(i);
    out.push(tools && r.kind === "record" ? { ...r, tools } : r);
  });
  while (k < inserts.length) out.push(inserts[k++]!.row);
  return out;
}
