/**
 * The one incremental entry flow every source plugs into. Per unit and sweep:
 *  1. classify every file of the unit against its stored cursor (cursor.ts);
 *  2. every file gone → "gone"; a prior shard, no file dropped and every file unchanged →
 *     "unchanged" (with `reparseUnreadableState`, only when `parseState` accepts the
 *     prior state: a shard whose state this parser cannot read is re-read by `full`);
 *  3. with a prior shard whose state the source accepts, try the source's `append`; it
 *     returns null (or throws CursorMismatchError: a file was rewritten between
 *     classification and reading) when only a full parse can give the right answer;
 *  4. the source's `full` parse; a CursorMismatchError there (a file rewritten while it
 *     was streamed) is retried ONCE from scratch — a second one propagates, and the
 *     indexer reports the unit's error and retries at the next sweep.
 * Invariant: `append` must only return output equal to what a full parse would publish;
 * the flow cannot check that, the source's tests do.
 * {@link nextRewriteEpoch} is the one place a re-read's rewrite epoch is computed.
 */
import { classifySource, CursorMismatchError, type FileStatLite } from "../../cursor.ts";
import type { HardlinkPolicy } from "../../cursor.ts";
import type { CursorClass, FileCursor } from "../../cursor_types.ts";
import type { ExtractOutcome, PriorShard, SessionUnit } from "./types.ts";

/** One file of the unit, classified against its cursor. */
export interface ClassifiedFile {
  path: string;
  role: string;
  /** The stored cursor (null: never read). */
  cursor: FileCursor | null;
  /** lstat-level facts (null: missing). */
  stat: FileStatLite | null;
  class: CursorClass;
}

/** What both hooks get. */
export interface FlowFullInput {
  unit: SessionUnit;
  prior: PriorShard | null;
  files: ClassifiedFile[];
  /** True when a file the prior shard read is no longer part of the unit, or is gone. */
  dropped: boolean;
  now: number;
}

/** What `append` gets: a prior shard and its state, accepted by `parseState`. */
export interface FlowAppendInput<S> extends FlowFullInput {
  prior: PriorShard;
  state: S;
}

/** A source's hooks into {@link runEntryFlow}. */
export interface EntryFlow<S> {
  /** The prior shard's state if this parser can continue from it, else null. */
  parseState(raw: unknown): S | null;
  /** Continues from the prior shard; null when only a full parse can answer. */
  append?(input: FlowAppendInput<S>): Promise<ExtractOutcome | null>;
  /** Reads the unit from scratch. */
  full(input: FlowFullInput): Promise<ExtractOutcome>;
  /** Hardlinked source files: "allow" for agents' transcripts. @default "allow" */
  hardlinks?: HardlinkPolicy;
  /**
   * When true, an unchanged unit whose prior state `parseState` rejects is not
   * "unchanged" but goes to `full` (Codex: an unreadable state re-parses from scratch
   * with a bumped rewrite epoch instead of staying stale until the file changes). Costs
   * one `parseState` per unchanged unit per sweep, so it is opt-in. @default false
   */
  reparseUnreadableState?: boolean;
}

/** Runs the flow of the header for one unit. */
export async function runEntryFlow<S>(
  unit: SessionUnit,
  prior: PriorShard | null,
  o: { now: number; flow: EntryFlow<S> },
): Promise<ExtractOutcome> {
  const { now, flow } = o;
  const files: ClassifiedFile[] = [];
  for (const f of unit.files) {
    const cursor = prior?.cursors[f.path] ?? null;
    const c = await classifySource(f.path, cursor, { now, hardlinks: flow.hardlinks });
    files.push({ path: f.path, role: f.role, cursor, stat: c.stat, class: c.class });
  }
  if (files.every((f) => f.class.kind === "gone")) return { kind: "gone" };
  const kinds = new Map(files.map((f) => [f.path, f.class.kind]));
  const dropped = Object.keys(prior?.cursors ?? {}).some((p) =>
    kinds.get(p) === undefined || kinds.get(p) === "gone"
  );
  if (prior && !dropped && files.every((f) => f.class.kind === "unchanged")) {
    if (!flow.reparseUnreadableState || flow.parseState(prior.state) !== null) {
      return { kind: "unchanged" };
    }
  }
  const input: FlowFullInput = { unit, prior, files, dropped, now };
  const state = prior && flow.append ? flow.parseState(prior.state) : null;
  if (prior && flow.append && state !== null) {
    try {
      const out = await flow.append({ ...input, prior, state });
      if (out) return out;
    } catch (err) {
      // Rewritten between classification and reading: the full parse re-reads it.
      if (!(err instanceof CursorMismatchError)) throw err;
    }
  }
  try {
    return await flow.full(input);
  } catch (err) {
    // A file rewritten while we streamed it: one more attempt from scratch.
    if (!(err instanceof CursorMismatchError)) throw err;
    return await flow.full(input);
  }
}

/**
 * The rewrite epoch a re-read from scratch stamps on its cursor: one past the stored
 * cursor's, 0 for a file never read. `shardExists` (default: a cursor exists) makes a file
 * new to an existing shard start at 1, as Claude's full parse always did.
 */
export function nextRewriteEpoch(
  cursor: FileCursor | null | undefined,
  o: { shardExists?: boolean } = {},
): number {
  const { shardExists = cursor != null } = o;
  return shardExists ? (cursor?.rewrite_epoch ?? 0) + 1 : 0;
}
