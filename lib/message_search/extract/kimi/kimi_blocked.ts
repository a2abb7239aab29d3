/**
 * The fail-closed outcome of a Kimi session that breaks a bound: it publishes NOTHING.
 * The first time, a replace with no records retracts whatever an earlier sweep published
 * and counts the reason once; afterwards, while the wires are only appended, an empty
 * append just moves the cursors on (no recount). The cursors skip to the end of each wire
 * without keeping a byte of it (at a 1-byte line cap every line is skipped unbuffered),
 * so a refused wire is streamed once and never held in memory, later sweeps scan only
 * what was appended, and an idle blocked session classifies unchanged from a stat.
 * Errors: a wire that vanishes while its stub is taken is left out (the session is gone
 * or shrinks next sweep); a wire rewritten meanwhile falls back to the retracting replace.
 */
import { CursorMismatchError, readIncrement } from "../../cursor.ts";
import type { FileCursor } from "../../cursor_types.ts";
import { countSkip, type ExtractOutcome, nextRewriteEpoch } from "../framework/plugin.ts";
import type { KimiBlockReason } from "./kimi_limits.ts";
import type { KimiSessionMeta } from "./kimi_read.ts";
import { entryMeta, type KimiCall, type KimiState } from "./kimi_state.ts";

/** The outcome for a session blocked by `reason`. `skipped` holds this read's counts. */
export async function blockedOutcome(
  call: KimiCall,
  reason: KimiBlockReason,
  meta: KimiSessionMeta | null,
  skipped: Record<string, number>,
): Promise<ExtractOutcome> {
  const st = call.state;
  if (call.continuable && st?.blocked === reason) {
    const cursors = await advanceStubs(call);
    if (cursors) {
      return {
        kind: "append",
        records: [],
        marks: [],
        cursors,
        state: st,
        meta: entryMeta(call, meta, st),
        skipped,
      };
    }
  }
  const cursors: Record<string, FileCursor> = {};
  for (const f of call.files) {
    if (f.stat?.kind !== "file") continue;
    const c = await stubCursor(f.path, null, nextRewriteEpoch(f.cursor));
    if (c) cursors[f.path] = c;
  }
  countSkip(skipped, reason);
  const state: KimiState = { v: 1, blocked: reason, title: null, times: {} };
  return {
    kind: "replace",
    records: [],
    marks: [],
    cursors,
    state,
    meta: entryMeta(call, meta, state),
    skipped,
  };
}

/** Continues every stub; null when a wire was rewritten meanwhile. */
async function advanceStubs(call: KimiCall): Promise<Record<string, FileCursor> | null> {
  const cursors: Record<string, FileCursor> = {};
  for (const f of call.files) {
    const old = f.cursor;
    if (f.class.kind === "unchanged" && old) {
      cursors[f.path] = old;
      continue;
    }
    try {
      const c = await stubCursor(f.path, f.class.kind === "appended" ? old : null, 0);
      if (c) cursors[f.path] = c;
    } catch (err) {
      if (err instanceof CursorMismatchError) return null;
      throw err;
    }
  }
  return cursors;
}

/**
 * Rounds of skipping allowed per wire: a round ends early only at a line of 0–1 bytes
 * followed by a longer one (blank lines are rare in a wire); past this the cursor is
 * kept where it got to and the next sweep continues.
 */
const SKIP_ROUNDS = 64;

/** A cursor at the last complete line of `path` (from `from`); null when it vanished. */
async function stubCursor(
  path: string,
  from: FileCursor | null,
  rewriteEpoch: number,
): Promise<FileCursor | null> {
  let cursor = from;
  try {
    for (let round = 0; round < SKIP_ROUNDS; round++) {
      const inc = await readIncrement(path, cursor, { maxLineBytes: 1, rewriteEpoch });
      const progressed = cursor === null || inc.cursor.offset > cursor.offset;
      cursor = inc.cursor;
      // An increment that reached the end records the file size; an early one its offset.
      if (!progressed || cursor.size > cursor.offset || inc.oversizedLines.length === 0) break;
    }
    return cursor;
  } catch (err) {
    if (err instanceof Deno.errors.NotFound) return null;
    throw err;
  }
}
