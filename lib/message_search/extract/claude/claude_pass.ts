/**
 * One pass over Claude Code transcript lines → MessageRecords, shared by the full parse
 * and the incremental append. A full pass feeds the main file's DAG (claude_dag.ts) and
 * dedupes uuids unit-wide; an append checks each row against the carried LaneState
 * (claude_lane.ts) and per-file windows, and sets `needFull` the moment it cannot prove
 * the result equals a full parse.
 *
 * Rules (formats.md §2): record id = the row `uuid` (stable, unique after dedupe; the
 * first occurrence of a uuid wins: compaction and resume replays re-append rows under the
 * same uuid); locator external_record_id. Subagent files and sidechain rows publish
 * under the parent session with `subagent: true` (the first prompt, written by the parent
 * agent, included: formats.md §2.3 policy). Resume replays: in a main file `<X>.jsonl`, a
 * non-sidechain row whose `sessionId` is another session Y whose own transcript was
 * discovered is Y's history copied by `--resume` under the same uuids: skipped and counted
 * ("replayed_from_other_session"); when Y's transcript is absent it stays under X, so
 * nothing is lost. Titles come from the main file only.
 */
import { z } from "zod";
import { lineText } from "../../../durable/mod.ts";
import type { Increment } from "../../cursor.ts";
import { hash16Of } from "../../locator.ts";
import { capText, type MessageRecord } from "../../record.ts";
import type { ClaudeDag } from "./claude_dag.ts";
import type { LaneCursor, LaneState } from "./claude_lane.ts";
import { parseRow, type Row, titleOf } from "./claude_rows.ts";
import { countSkip } from "../framework/plugin.ts";

/** Uuids remembered per file for append-time dedupe and the subagent linearity check. */
export const FILE_WINDOW = 16;
/** Longest uuid accepted as a record id (the locator schema's bound). */
const MAX_ID_CHARS = 512;

/** Title inputs (each a short, capped string). */
export interface TitleState {
  custom: string | null;
  ai: string | null;
  summary: string | null;
  firstMain: string | null;
  firstAny: string | null;
}

/** The persisted carry-over: small and bounded. */
export interface ClaudeState {
  v: 1;
  lane: LaneState | null;
  files: Record<string, { n: number; recent: string[] }>;
  titles: TitleState;
  project: string | null;
}

const nullableText = z.string().nullable();
const StateSchema = z.object({
  v: z.literal(1),
  lane: z.object({
    nodes: z.number().int().nonnegative(),
    lastConv: nullableText,
    lastHuman: nullableText,
    locked: z.boolean(),
    win: z.array(z.tuple([z.string(), nullableText, z.number().int()])),
  }).nullable(),
  files: z.record(
    z.string(),
    z.object({ n: z.number().int().nonnegative(), recent: z.array(z.string()) }),
  ),
  titles: z.object({
    custom: nullableText,
    ai: nullableText,
    summary: nullableText,
    firstMain: nullableText,
    firstAny: nullableText,
  }),
  project: nullableText,
});

/** The carried state, or null when it is missing or not ours (then: a full parse). */
export function parseState(raw: unknown): ClaudeState | null {
  const r = StateSchema.safeParse(raw);
  return r.success ? structuredClone(r.data) as ClaudeState : null;
}

/** A fresh state. */
export function emptyState(): ClaudeState {
  return {
    v: 1,
    lane: null,
    files: {},
    titles: { custom: null, ai: null, summary: null, firstMain: null, firstAny: null },
    project: null,
  };
}

/** One file being read. */
export interface PassFile {
  path: string;
  /** Path relative to the projects root (locators). */
  rel: string;
  main: boolean;
}

/** Working context for one pass. */
export interface Pass {
  sessionId: string;
  /** Session ids whose main transcript was discovered (replay detection). */
  corpus: ReadonlySet<string>;
  records: MessageRecord[];
  nextOrder: number;
  skipped: Record<string, number>;
  state: ClaudeState;
  /** Full pass: the DAG, the unit-wide uuid set and the main lane's prose uuids. */
  full: { dag: ClaudeDag; seen: Set<string>; mainProse: string[] } | null;
  /** Append pass: the main lane's incremental rules. */
  lane: LaneCursor | null;
  /**
   * Append pass: the newest `last-prompt` leaf not yet followed by a conversation row. Only
   * that pointer can decide the leaf (a newer conversation row wins), so it is judged once,
   * after the increment: a pointer written just before the row it names costs nothing.
   */
  pendingLeaf: string | null;
  needFull: boolean;
}

/** Feeds every complete line of `inc` to the pass. */
export function passLines(p: Pass, inc: Increment, file: PassFile): void {
  if (inc.oversizedLines.length) countSkip(p.skipped, "oversized_line", inc.oversizedLines.length);
  for (const span of inc.lines) {
    if (p.needFull) return;
    if (span.end === span.start) continue;
    const row = parseRow(lineText(inc.bytes, span, inc.baseOffset));
    if (row === null) countSkip(p.skipped, "malformed_line");
    else passRow(p, row, file, span.lineNo);
  }
}

function passRow(p: Pass, row: Row, file: PassFile, lineNo: number): void {
  const st = p.state;
  if (st.project === null && row.cwd) st.project = row.cwd;
  const lane = file.main && !row.sidechain;
  if (file.main) noteMainMeta(p, row, lineNo);
  if (p.needFull) return;
  let uuid = row.uuid;
  if (uuid !== null && uuid.length > MAX_ID_CHARS) {
    countSkip(p.skipped, "bad_uuid");
    uuid = null;
  }
  // uuid !== null means uuid === row.uuid: the row itself is the keyed row (no copy per line).
  if (uuid !== null && !seenOrAdd(p, row as Row & { uuid: string }, file, lane, lineNo)) return;
  if (row.defect) countSkip(p.skipped, row.defect);
  if (row.prose === null || uuid === null || row.ts === null || row.role === null) return;
  if (lane && row.sessionId && row.sessionId !== p.sessionId && p.corpus.has(row.sessionId)) {
    countSkip(p.skipped, "replayed_from_other_session");
    return;
  }
  const capped = capText(row.prose);
  const subagent = !lane;
  p.records.push({
    id: uuid,
    source: "claude-code",
    session_id: p.sessionId,
    role: row.role,
    ts_ms: row.ts,
    text: capped.text,
    truncated: capped.truncated,
    locator: {
      v: 1,
      kind: "external_record_id",
      record_id: uuid,
      file: file.rel,
      hash: hash16Of(capped.text),
    },
    order: p.nextOrder++,
    generation: 0,
    subagent,
  });
  if (lane) p.full?.mainProse.push(uuid);
  if (row.role === "user") {
    if (!subagent) st.titles.firstMain ??= titleOf(row.prose);
    st.titles.firstAny ??= titleOf(row.prose);
  }
}

/** Titles, pointers and queued prompts of the main file. */
function noteMainMeta(p: Pass, row: Row, lineNo: number): void {
  if (row.title) {
    const kind = row.title.kind;
    p.state.titles[kind] = titleOf(row.title.text, 200) ?? p.state.titles[kind];
  }
  if (row.queued !== undefined) p.full?.dag.enqueue(row.queued);
  if (row.leaf === undefined) return;
  if (p.full) p.full.dag.lastPrompt(row.leaf, lineNo);
  else p.pendingLeaf = row.leaf;
}

/** Append pass, after the main file's increment: whether the pending pointer is harmless. */
export function pendingLeafHolds(p: Pass): boolean {
  return p.pendingLeaf === null || (p.lane !== null && p.lane.acceptsLeaf(p.pendingLeaf));
}

/**
 * Records the uuid; false when the row must yield nothing (a duplicate, or the append
 * cannot continue).
 */
function seenOrAdd(
  p: Pass,
  row: Row & { uuid: string },
  file: PassFile,
  lane: boolean,
  lineNo: number,
): boolean {
  const fs = (p.state.files[file.path] ??= { n: 0, recent: [] });
  let dup: boolean;
  if (p.full) {
    dup = p.full.seen.has(row.uuid);
    p.full.seen.add(row.uuid);
    if (lane && !dup) p.full.dag.add(row, lineNo);
  } else if (lane && p.lane) {
    const v = p.lane.add(row);
    if (v === "full") return !(p.needFull = true);
    dup = v === "dup" || fs.recent.includes(row.uuid);
    if (v === "ok" && row.conv) p.pendingLeaf = null;
  } else {
    dup = fs.recent.includes(row.uuid);
    // A subagent transcript grows as a chain; anything else (a replay burst of rows older
    // than the window) re-parses. Sidechain rows inside an old main file interleave with
    // main rows, so only the window dedupes them.
    const linear = fs.n === 0 || (row.parent !== null && fs.recent.includes(row.parent));
    if (!dup && !file.main && !linear) return !(p.needFull = true);
  }
  if (dup) {
    countSkip(p.skipped, "duplicate_uuid");
    return false;
  }
  fs.n++;
  fs.recent.push(row.uuid);
  if (fs.recent.length > FILE_WINDOW) fs.recent.shift();
  return true;
}
