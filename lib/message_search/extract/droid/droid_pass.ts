/**
 * Factory Droid session lines → records, as a fold with a small carried state (pure), so
 * an append continues exactly where a full pass would be.
 * Records: id = the message `id` (UUID) in the main file, `<file session id>:<id>` in a
 * sub-agent file (two files may both hold an id); locator `external_record_id` with the
 * message id and the file relative to the Factory home. A message id already among the
 * last DUP_WINDOW ids of the unit is a replayed line: skipped, counted
 * (`duplicate_uuid`) — the same check in a full pass and an append.
 * Time: the line's `timestamp`; a message without a readable one inherits the last time
 * seen (deterministic), else 0.
 */
import { hash16Of } from "../../locator.ts";
import { capText, type MessageRecord } from "../../record.ts";
import { countSkip, firstLineTitle } from "../framework/plugin.ts";
import { parseDroidLine } from "./droid_lines.ts";

/** Recent ids checked for replays (bounded: it rides in the manifest). */
export const DUP_WINDOW = 32;

/** Carried between sweeps. */
export interface DroidState {
  v: 1;
  last_ts: number | null;
  /** From the main file's session_start. */
  title: string | null;
  cwd: string | null;
  parent: string | null;
  first_user: string | null;
  recent: string[];
}

/** A fresh state. */
export function newDroidState(): DroidState {
  return {
    v: 1,
    last_ts: null,
    title: null,
    cwd: null,
    parent: null,
    first_user: null,
    recent: [],
  };
}

/** Narrows a persisted state. */
export function parseDroidState(raw: unknown): DroidState | null {
  if (typeof raw !== "object" || raw === null) return null;
  const s = raw as Record<string, unknown>;
  const so = (x: unknown) => x === null || typeof x === "string";
  const ok = s.v === 1 && (s.last_ts === null || typeof s.last_ts === "number") && so(s.title) &&
    so(s.cwd) && so(s.parent) && so(s.first_user) && Array.isArray(s.recent) &&
    s.recent.length <= DUP_WINDOW && s.recent.every((x) => typeof x === "string");
  return ok ? structuredClone(s) as unknown as DroidState : null;
}

/** One complete line. */
export interface LineIn {
  lineNo: number;
  bytes: Uint8Array;
}

/** Facts of one file's pass. */
export interface DroidFileContext {
  /** The unit's session id. */
  sessionId: string;
  /** Locator `file`. */
  file: string;
  /** Id prefix ("" for the main file, `<sub session id>:` for a sub-agent's). */
  tag: string;
  subagent: boolean;
  nextOrder: number;
}

/** Records and skips of one pass; `state` advanced (a copy). */
export interface DroidPassResult {
  records: MessageRecord[];
  skipped: Record<string, number>;
  state: DroidState;
}

/** Folds one file's lines. */
export function droidPass(
  lines: Iterable<LineIn>,
  prior: DroidState,
  ctx: DroidFileContext,
): DroidPassResult {
  const state = structuredClone(prior);
  const skipped: Record<string, number> = {};
  const records: MessageRecord[] = [];
  for (const l of lines) {
    const item = parseDroidLine(l.bytes);
    if (item.kind === "skip") {
      if (item.reason !== "blank_line") countSkip(skipped, item.reason);
      continue;
    }
    if (item.kind === "header") {
      // Only the main file's line 1 describes the unit; a sub-agent's names its own run.
      if (l.lineNo === 1 && !ctx.subagent) {
        state.title = item.header.title;
        state.cwd = item.header.cwd;
        state.parent = item.header.parent;
      }
      continue;
    }
    if (item.ts_ms !== null) state.last_ts = item.ts_ms;
    if (item.kind !== "prose") continue;
    const id = `${ctx.tag}${item.id}`;
    if (state.recent.includes(id)) {
      countSkip(skipped, "duplicate_uuid");
      continue;
    }
    state.recent.push(id);
    if (state.recent.length > DUP_WINDOW) state.recent.shift();
    const capped = capText(item.text);
    records.push({
      id,
      source: "droid",
      session_id: ctx.sessionId,
      role: item.role,
      ts_ms: Math.trunc(item.ts_ms ?? state.last_ts ?? 0),
      text: capped.text,
      truncated: capped.truncated,
      locator: {
        v: 1,
        kind: "external_record_id",
        record_id: item.id,
        file: ctx.file,
        hash: hash16Of(capped.text),
      },
      order: ctx.nextOrder + records.length,
      generation: 0,
      subagent: ctx.subagent,
    });
    if (state.first_user === null && item.role === "user" && !ctx.subagent) {
      state.first_user = firstLineTitle(item.text);
    }
  }
  return { records, skipped, state };
}
