/**
 * Copilot CLI `events.jsonl` lines → records, as a fold over complete lines with a small
 * carried state, so an append continues exactly where a full pass would be (the fold is
 * the same function; tests check append == full pass). Pure: lines in, records out.
 *
 * Records: id = the envelope event id (UUID v4; unique per session) at generation 0, and
 * `<event id>@g<generation>` after a generation restart (vanish_window.ts), so ids stay
 * unique within the shard that keeps both copies. Locator: `external_record_id` with the
 * event id, the file relative to the Copilot home, and the hash of the record text.
 * An event id already in the window (a replayed line) is skipped and counted as
 * `duplicate_uuid`; a duplicate further back than the window is only caught by a
 * re-parse (hand-made input: Copilot never repeats an id).
 * Time: the envelope timestamp; a prose event without a readable one inherits the last
 * time seen in the file (deterministic, so append == full), else 0.
 * State (bounded: the window is capped): generation, vanish window, last time, cwd, the
 * title fallback, skip counts.
 */
import { hash16Of } from "../../locator.ts";
import { capText, type MessageRecord } from "../../record.ts";
import { countSkip, firstLineTitle } from "../framework/plugin.ts";
import { parseCopilotLine } from "./copilot_events.ts";
import { emptyWindow, isVanishWindow, pushWindow, type VanishWindow } from "./vanish_window.ts";

/** Carried between sweeps (see the header). */
export interface CopilotState {
  v: 1;
  generation: number;
  window: VanishWindow;
  last_ts: number | null;
  cwd: string | null;
  first_user: string | null;
  /**
   * Skipped lines of the file as consumed so far, by reason (a handful of keys): a
   * rewrite re-reads the whole file, and only what this adds is reported again.
   */
  skips: Record<string, number>;
}

/** A fresh state at `generation`. */
export function newCopilotState(generation = 0): CopilotState {
  return {
    v: 1,
    generation,
    window: emptyWindow(),
    last_ts: null,
    cwd: null,
    first_user: null,
    skips: {},
  };
}

/** Narrows a persisted state; null when this parser cannot continue from it. */
export function parseCopilotState(raw: unknown): CopilotState | null {
  if (typeof raw !== "object" || raw === null) return null;
  const s = raw as Record<string, unknown>;
  const strOrNull = (x: unknown) => x === null || typeof x === "string";
  const ok = s.v === 1 && typeof s.generation === "number" &&
    Number.isSafeInteger(s.generation) && s.generation >= 0 && isVanishWindow(s.window) &&
    (s.last_ts === null || typeof s.last_ts === "number") && strOrNull(s.cwd) &&
    strOrNull(s.first_user) && typeof s.skips === "object" &&
    s.skips !== null && Object.values(s.skips).every((n) => Number.isSafeInteger(n));
  return ok ? structuredClone(s) as unknown as CopilotState : null;
}

/** One complete line: its 1-based number and bytes without the "\n". */
export interface LineIn {
  lineNo: number;
  bytes: Uint8Array;
}

/** Fixed facts of one pass. */
export interface CopilotPassContext {
  sessionId: string;
  /** Locator `file`: path relative to the Copilot home. */
  file: string;
  /** `order` of the first record this pass emits. */
  nextOrder: number;
}

/** What a pass produced; `state` is the input state, advanced. */
export interface CopilotPassResult {
  records: MessageRecord[];
  skipped: Record<string, number>;
  state: CopilotState;
}

/** The record id of event `eventId` at `generation`. */
export function copilotRecordId(eventId: string, generation: number): string {
  return generation === 0 ? eventId : `${eventId}@g${generation}`;
}

/** Folds `lines` into `state` (a copy is advanced and returned). */
export function copilotPass(
  lines: Iterable<LineIn>,
  prior: CopilotState,
  ctx: CopilotPassContext,
): CopilotPassResult {
  const state = structuredClone(prior);
  const skipped: Record<string, number> = {};
  const records: MessageRecord[] = [];
  for (const line of lines) {
    const item = parseCopilotLine(line.bytes);
    if (item.kind === "skip") {
      if (item.reason !== "blank_line") countSkip(skipped, item.reason);
      continue;
    }
    if (item.ts_ms !== null) state.last_ts = item.ts_ms;
    if (item.kind === "event") {
      if (item.cwd !== null) state.cwd = item.cwd;
      continue;
    }
    const id = copilotRecordId(item.id, state.generation);
    // Only the window is consulted, in a full pass too, so append == full pass holds.
    if (state.window.win.some(([w]) => w === id)) {
      countSkip(skipped, "duplicate_uuid");
      continue;
    }
    const capped = capText(item.text);
    records.push({
      id,
      source: "copilot",
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
      generation: state.generation,
      subagent: item.subagent,
    });
    pushWindow(state.window, { id, text: capped.text });
    if (state.first_user === null && item.role === "user" && !item.subagent) {
      state.first_user = firstLineTitle(item.text);
    }
  }
  for (const [k, n] of Object.entries(skipped)) state.skips[k] = (state.skips[k] ?? 0) + n;
  return { records, skipped, state };
}
