/**
 * Cursor transcript lines → records (pure). Cursor writes no ids and no times
 * (formats-more.md §4.4), so identity is positional and content-checked:
 * - record id `<file tag>L<line>.<hash8 of the line bytes>` (`@g<n>` appended after a
 *   generation restart), unique within the shard because a line number is unique within
 *   its file and the tag names the file (main: empty; a sub-agent: its file stem + ":");
 * - locator `external_line` {file relative to the Cursor root, generation, line, hash of
 *   the record text}: jump-to-hit finds the line, the hash proves it still says that;
 * - ts_ms = the file's mtime when the line was first read (the cursor's fstat mtime), so
 *   every line of one read shares a time, and an append's lines get the later mtime.
 * The fold carries only the generation and the title, so a JSONL append continues exactly
 * where a full pass is (ids, text, order); only ts_ms differs by construction (a full pass
 * stamps the newer mtime on every line).
 */
import { hash16Of } from "../../locator.ts";
import { capText, type MessageRecord } from "../../record.ts";
import { countSkip, firstLineTitle } from "../framework/plugin.ts";
import { parseCursorLine, parseCursorTxt } from "./cursor_lines.ts";

/** Carried between sweeps. */
export interface CursorState {
  v: 1;
  generation: number;
  first_user: string | null;
  /** Skipped lines of the unit's files as consumed so far (a restart reports only more). */
  skips: Record<string, number>;
}

/** Narrows a persisted state; null when this parser cannot continue from it. */
export function parseCursorState(raw: unknown): CursorState | null {
  if (typeof raw !== "object" || raw === null) return null;
  const s = raw as Record<string, unknown>;
  const ok = s.v === 1 && typeof s.generation === "number" && Number.isSafeInteger(s.generation) &&
    s.generation >= 0 && (s.first_user === null || typeof s.first_user === "string") &&
    typeof s.skips === "object" && s.skips !== null &&
    Object.values(s.skips).every((n) => Number.isSafeInteger(n));
  return ok
    ? {
      v: 1,
      generation: s.generation as number,
      first_user: s.first_user as string | null,
      skips: { ...s.skips as Record<string, number> },
    }
    : null;
}

/** One complete line. */
export interface LineIn {
  lineNo: number;
  bytes: Uint8Array;
}

/** Facts of one file's pass. */
export interface CursorFileContext {
  sessionId: string;
  /** Locator `file`. */
  file: string;
  /** Id prefix naming the file ("" for the main transcript). */
  tag: string;
  subagent: boolean;
  /** ts_ms of every record of this read. */
  ts_ms: number;
  /** `order` of the first record. */
  nextOrder: number;
}

/** Records and skips of one pass; `state` advanced (a copy). */
export interface CursorPassResult {
  records: MessageRecord[];
  skipped: Record<string, number>;
  state: CursorState;
}

function record(
  ctx: CursorFileContext,
  state: CursorState,
  p: { line: number; lineHash: string; role: "user" | "assistant"; text: string; order: number },
): MessageRecord {
  const capped = capText(p.text);
  const gen = state.generation;
  return {
    id: `${ctx.tag}L${p.line}.${p.lineHash}${gen === 0 ? "" : `@g${gen}`}`,
    source: "cursor",
    session_id: ctx.sessionId,
    role: p.role,
    ts_ms: Math.trunc(ctx.ts_ms),
    text: capped.text,
    truncated: capped.truncated,
    locator: {
      v: 1,
      kind: "external_line",
      file: ctx.file,
      generation: gen,
      line: p.line,
      hash: hash16Of(capped.text),
    },
    order: p.order,
    generation: gen,
    subagent: ctx.subagent,
  };
}

function noteTitle(state: CursorState, ctx: CursorFileContext, role: string, text: string): void {
  if (state.first_user === null && role === "user" && !ctx.subagent) {
    state.first_user = firstLineTitle(text);
  }
}

/** Folds JSONL lines of one file. */
export function cursorJsonlPass(
  lines: Iterable<LineIn>,
  prior: CursorState,
  ctx: CursorFileContext,
): CursorPassResult {
  const state = { ...prior };
  const skipped: Record<string, number> = {};
  const records: MessageRecord[] = [];
  for (const l of lines) {
    const item = parseCursorLine(l.bytes);
    if (item.kind === "skip") {
      countSkip(skipped, item.reason);
      continue;
    }
    if (item.kind !== "prose") continue;
    records.push(record(ctx, state, {
      line: l.lineNo,
      lineHash: hash16Of(l.bytes).slice(0, 8),
      role: item.role,
      text: item.text,
      order: ctx.nextOrder + records.length,
    }));
    noteTitle(state, ctx, item.role, item.text);
  }
  return { records, skipped, state };
}

const utf8 = new TextDecoder("utf-8");

/** Parses a whole legacy `.txt` transcript (its complete lines). */
export function cursorTxtPass(
  lines: readonly LineIn[],
  prior: CursorState,
  ctx: CursorFileContext,
): CursorPassResult {
  const state = { ...prior };
  const skipped: Record<string, number> = {};
  const texts: string[] = [];
  const first = lines[0]?.lineNo ?? 1;
  for (const l of lines) {
    // A skipped (oversized) line leaves a gap: blank lines keep the numbering exact.
    while (first + texts.length < l.lineNo) texts.push("");
    // Not fatal: stray non-UTF-8 bytes decode to U+FFFD, the line keeps its text.
    texts.push(utf8.decode(l.bytes));
  }
  const records = parseCursorTxt(texts, first).map((b, n) => {
    noteTitle(state, ctx, b.role, b.text);
    return record(ctx, state, {
      line: b.line,
      lineHash: hash16Of(b.text).slice(0, 8),
      role: b.role,
      text: b.text,
      order: ctx.nextOrder + n,
    });
  });
  return { records, skipped, state };
}
