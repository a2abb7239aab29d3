/**
 * Bounded reads for the Kimi extractor: one agent wire through the shared cursor API,
 * and a session's state.json (metadata only, never cursor-tracked).
 *
 * Invariants:
 * - Wires are read only through readIncrement (torn tails wait; a line longer than the
 *   record cap is skipped unbuffered and reported, and the caller then blocks the whole
 *   session: a wire is never partially published).
 * - Effective time: a record's own `time`, else the time of the line before it in the
 *   same wire, seeded by the metadata `created_at` (or the caller's seed). 1.5 records
 *   always carry `time`; older protocols may not.
 * - state.json is read only through the contained reader (no symlink followed, no FIFO
 *   waited on, a swap refused; a hardlinked twin allowed, as for every agent file); one
 *   larger than the cap reports `oversized` (the caller blocks the session). Its fields
 *   (v2 SessionMeta [src: session/sessionMetadata/sessionMetadata.ts]): title, cwd,
 *   createdAt/updatedAt as epoch ms or, in older files, ISO strings.
 * Errors: malformed input is counted; a missing file is reported, not thrown; other I/O
 * errors propagate to the indexer, which records them per session.
 */
import { lineText, readContained } from "../../../durable/mod.ts";
import { type Increment, readIncrement } from "../../cursor.ts";
import type { FileCursor } from "../../cursor_types.ts";
import { countSkip, noteSourceOpen } from "../framework/plugin.ts";
import { epochMs, interpretWireLine } from "./kimi_wire.ts";
import type { TimedOp } from "./kimi_pass.ts";

/** One wire increment, interpreted. */
export interface WireRead {
  cursor: FileCursor;
  ops: TimedOp[];
  /** Effective time of the last complete line (the next increment's seed). */
  lastTime: number;
  /** Lines longer than the record cap that the increment met. */
  oversized: number;
  /** True when the increment holds a context.undo (an append then needs a full parse). */
  hasUndo: boolean;
}

/** Options for {@link readWire}. */
export interface ReadWireOptions {
  maxRecordBytes: number;
  /** Time carried into the first line when it has none. */
  seedTime: number;
  /** rewrite_epoch for a read from scratch. @default 0 */
  rewriteEpoch?: number;
  /** Stop after this many bytes (stub cursors for a blocked session). */
  maxBytes?: number;
  skipped: Record<string, number>;
}

/** Reads and interprets the complete lines of a wire after `from` (or from the start). */
export async function readWire(
  path: string,
  from: FileCursor | null,
  o: ReadWireOptions,
): Promise<WireRead> {
  const inc = await readIncrement(path, from, {
    maxLineBytes: o.maxRecordBytes,
    rewriteEpoch: o.rewriteEpoch ?? 0,
    ...(o.maxBytes === undefined ? {} : { maxBytes: o.maxBytes }),
  });
  return interpretIncrement(inc, o.seedTime, o.skipped);
}

function interpretIncrement(
  inc: Increment,
  seedTime: number,
  skipped: Record<string, number>,
): WireRead {
  const ops: TimedOp[] = [];
  let carry = seedTime;
  let hasUndo = false;
  for (const span of inc.lines) {
    if (span.end === span.start) continue;
    const w = interpretWireLine(lineText(inc.bytes, span, inc.baseOffset), skipped);
    if (w.createdAt !== null && span.lineNo === 1) carry = w.createdAt;
    if (w.time !== null) carry = w.time;
    if (w.op === null) continue;
    if (w.op.kind === "undo") hasUndo = true;
    ops.push({ line: span.lineNo, time: carry, op: w.op });
  }
  if (inc.oversizedLines.length > 0) {
    countSkip(skipped, "oversized_line", inc.oversizedLines.length);
  }
  return {
    cursor: inc.cursor,
    ops,
    lastTime: carry,
    oversized: inc.oversizedLines.length,
    hasUndo,
  };
}

/** What state.json contributes. */
export interface KimiSessionMeta {
  title: string | null;
  cwd: string | null;
  createdAtMs: number | null;
  updatedAtMs: number | null;
}

const NO_META: KimiSessionMeta = { title: null, cwd: null, createdAtMs: null, updatedAtMs: null };

/** Reads `<dir>/state.json` within `maxBytes`; `oversized` when it is bigger. */
export async function readSessionState(
  path: string,
  maxBytes: number,
  skipped: Record<string, number>,
): Promise<{ meta: KimiSessionMeta; oversized: boolean }> {
  const got = await readBounded(path, maxBytes);
  if (got === "missing") return { meta: NO_META, oversized: false };
  if (got === "oversized") return { meta: NO_META, oversized: true };
  if (got === "not_regular") {
    countSkip(skipped, "state_json_not_regular");
    return { meta: NO_META, oversized: false };
  }
  let raw: unknown;
  try {
    raw = JSON.parse(new TextDecoder().decode(got));
  } catch {
    // A torn or hand-edited state.json loses only the metadata; the wires still index.
    countSkip(skipped, "malformed_state_json");
    return { meta: NO_META, oversized: false };
  }
  if (raw === null || typeof raw !== "object" || Array.isArray(raw)) {
    countSkip(skipped, "malformed_state_json");
    return { meta: NO_META, oversized: false };
  }
  const s = raw as Record<string, unknown>;
  const str = (v: unknown) => (typeof v === "string" && v.trim().length > 0 ? v : null);
  return {
    meta: {
      title: str(s.title),
      cwd: str(s.cwd),
      createdAtMs: epochMs(s.createdAt),
      updatedAtMs: epochMs(s.updatedAt),
    },
    oversized: false,
  };
}

async function readBounded(
  path: string,
  maxBytes: number,
): Promise<Uint8Array | "missing" | "oversized" | "not_regular"> {
  const r = await readContained(path, { hardlinks: "allow", maxBytes });
  if (r.ok) {
    noteSourceOpen();
    return r.bytes;
  }
  if (r.reason === "missing") return "missing";
  if (r.reason === "too_large") return "oversized";
  // A symlink, FIFO, device, or a swap between the lstat and the open.
  return "not_regular";
}
