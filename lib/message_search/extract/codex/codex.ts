/**
 * The OpenAI Codex extractor (formats.md §1): one unit per thread (`codex:<thread-id>`),
 * read from its single rollout, plain `.jsonl` or immutable `.jsonl.zst`. Discovery is in
 * codex_discover.ts, reading in codex_source.ts, line rules in codex_lines.ts; this file
 * decides, per sweep, how the shard moves on:
 * - unchanged → "unchanged"; file gone → "gone";
 * - appended → "append" continuing from the saved state (orders continue);
 * - moved (archive/unarchive, another home): the key is the thread id, so the SAME
 *   shard continues. A rename keeps dev+ino: the prior cursor is re-keyed by the new
 *   path (an "append", maybe empty, carrying the new cursors). A copy or a change of
 *   representation (plain ↔ zst) continues from the content mark when the consumed bytes
 *   are provably still there (prefix + anchor hashes): no re-index, no duplicates;
 * - rewritten in place (a same-thread restore; a shrink): the generation is bumped and
 *   the file re-parsed, KEEPING the earlier records. The "append" opens with a
 *   GenerationRestore mark after the prior records naming the new generation active,
 *   then the fresh records (orders continuing) and their own marks. Earlier marks are
 *   not carried: they key on their generation, which the restore supersedes anyway.
 *   When the consumed bytes are intact (a torn tail truncated and replaced, an atomic
 *   rewrite of identical content), the content mark continues instead: nothing we
 *   indexed changed, so nothing is superseded;
 * - no prior shard (or an unreadable prior state) → "replace" at generation 0.
 * State is fixed-size (codex_lines.ts CodexState). Malformed input is counted per
 * reason; only file-system failures (swapped to a symlink, permission) throw.
 */
import { basename } from "node:path";
import { classifySource, CursorMismatchError, MAX_LINE_BYTES, statSource } from "../../cursor.ts";
import type { FileCursor } from "../../cursor_types.ts";
import { hash16Of } from "../../locator.ts";
import { discoverCodex, MAX_WALK_ENTRIES } from "./codex_discover.ts";
import {
  type CodexState,
  CodexStateSchema,
  interpretLines,
  newCodexState,
  newLinePass,
} from "./codex_lines.ts";
import { type ContentMark, cursorFromMark, readPlain, type SourceRead } from "./codex_source.ts";
import { loadZst, markHolds, MAX_ZST_BYTES, zstLines } from "./codex_zst.ts";
import {
  countSkip,
  type Extractor,
  type ExtractOutcome,
  type PriorShard,
  resolveLimits,
  type SessionUnit,
  type ShardContent,
} from "../framework/plugin.ts";

/** Bumped whenever extraction output for the same input changes. */
export const CODEX_PARSER_VERSION = 1;

/** Options for {@link createCodexExtractor} (bounds; tests shrink them). */
export interface CodexExtractorOptions {
  /** Directory entries visited per home. @default MAX_WALK_ENTRIES (codex_discover.ts) */
  maxWalkEntries?: number;
  /** Largest `.jsonl.zst`, compressed or not. @default MAX_ZST_BYTES (codex_zst.ts) */
  maxZstBytes?: number;
  /** Longer rollout lines are skipped and counted. @default MAX_LINE_BYTES (cursor.ts) */
  maxLineBytes?: number;
}

/** The bounds' defaults, resolved through the framework's one resolver. */
export const CODEX_LIMITS: Readonly<Required<CodexExtractorOptions>> = Object.freeze({
  maxWalkEntries: MAX_WALK_ENTRIES,
  maxZstBytes: MAX_ZST_BYTES,
  maxLineBytes: MAX_LINE_BYTES,
});

/** Creates the extractor over CODEX_HOME directories (each holding sessions/, archived_sessions/). */
export function createCodexExtractor(
  roots: { homes: string[] },
  options: CodexExtractorOptions = {},
): Extractor {
  const limits = resolveLimits("Codex", CODEX_LIMITS, options);
  const homes = [...roots.homes];
  return {
    source: "codex",
    discover: () => discoverCodex(homes, { maxEntries: limits.maxWalkEntries }),
    extract: (unit, prior, ctx) => extractCodex({ unit, prior, now: ctx.now, options: limits }),
  };
}

interface Run {
  unit: SessionUnit;
  prior: PriorShard | null;
  now: number;
  options: CodexExtractorOptions;
}

/** Nothing consumed yet: every file "still holds" it. */
const EMPTY_MARK: ContentMark = {
  prefix_len: 0,
  prefix_hash: hash16Of(new Uint8Array()),
  offset: 0,
  anchor_len: 0,
  anchor_hash: hash16Of(new Uint8Array()),
  next_line: 1,
};

async function extractCodex(r: Run): Promise<ExtractOutcome> {
  const path = r.unit.files[0]?.path;
  const st = path === undefined ? null : await statSource(path);
  if (path === undefined || st === null || st.kind !== "file") return { kind: "gone" };
  const parsed = r.prior ? CodexStateSchema.safeParse(r.prior.state) : null;
  const state = parsed?.success ? parsed.data : null;
  const zst = path.endsWith(".zst");
  const priorCursors = Object.values(r.prior?.cursors ?? {});
  const epoch = Math.max(0, ...priorCursors.map((c) => c.rewrite_epoch ?? 0));
  if (!r.prior || !state) return await replace(r, path, zst, r.prior ? epoch + 1 : 0);
  const own = r.prior.cursors[path] ?? null;
  // Not our path but our inode: a rename (archive, unarchive, another home on one volume).
  const base = own ?? priorCursors.find((c) => c.dev === st.dev && c.ino === st.ino) ?? null;
  const mark = state.content ?? EMPTY_MARK;
  if (base) {
    const cls = (await classifySource(path, base, { now: r.now })).class;
    if (cls.kind === "gone") return { kind: "gone" };
    if (cls.kind === "unchanged") {
      if (own) return { kind: "unchanged" };
      return shard(r, "append", path, state, r.prior.records, emptyRead(base, mark));
    }
    if (cls.kind === "appended" && !zst) {
      const read = await tryPlain(r, path, base);
      if (read) return shard(r, "append", path, state, r.prior.records, read);
    }
  }
  if (zst) {
    const load = await loadZst(path, { rewriteEpoch: epoch, maxBytes: r.options.maxZstBytes });
    if (!load.ok) {
      // Fail closed: keep what the shard has, remember the file so it is not retried
      // every sweep, and say why.
      const read = { ...emptyRead(load.cursor, mark), skipped: { [load.reason]: 1 } };
      return shard(r, "append", path, state, r.prior.records, read);
    }
    if (markHolds(load.content, mark)) {
      const read = zstLines(load.content, mark, load.cursor);
      return shard(r, "append", path, state, r.prior.records, read);
    }
    const cursor = { ...load.cursor, rewrite_epoch: epoch + 1 };
    return restore(r, path, state, zstLines(load.content, null, cursor));
  }
  const read = await tryPlain(r, path, cursorFromMark(mark, st, base?.rewrite_epoch ?? epoch));
  if (read) return shard(r, "append", path, state, r.prior.records, read);
  const fresh = await readPlain(path, null, {
    rewriteEpoch: epoch + 1,
    maxLineBytes: r.options.maxLineBytes,
  });
  return restore(r, path, state, fresh);
}

/** readPlain, or null when the cursor no longer describes the file. */
async function tryPlain(r: Run, path: string, from: FileCursor): Promise<SourceRead | null> {
  try {
    return await readPlain(path, from, {
      rewriteEpoch: from.rewrite_epoch ?? 0,
      maxLineBytes: r.options.maxLineBytes,
    });
  } catch (err) {
    // Rewritten between classification and reading, or not our bytes: the caller
    // falls back to the content mark, then to a restore.
    if (err instanceof CursorMismatchError) return null;
    throw err;
  }
}

function emptyRead(cursor: FileCursor, mark: ContentMark): SourceRead {
  return { lines: [], cursor, mark, skipped: {} };
}

/** No usable prior: parse everything at generation 0. */
async function replace(r: Run, path: string, zst: boolean, epoch: number): Promise<ShardContent> {
  const state = newCodexState(0);
  if (!zst) {
    const read = await readPlain(path, null, {
      rewriteEpoch: epoch,
      maxLineBytes: r.options.maxLineBytes,
    });
    return shard(r, "replace", path, state, 0, read);
  }
  const load = await loadZst(path, { rewriteEpoch: epoch, maxBytes: r.options.maxZstBytes });
  const read = load.ok
    ? zstLines(load.content, null, load.cursor)
    : { ...emptyRead(load.cursor, EMPTY_MARK), skipped: { [load.reason]: 1 } };
  return shard(r, "replace", path, state, 0, read);
}

/** In-place rewrite: a new generation next to the kept records, named active by a mark. */
function restore(r: Run, path: string, prev: CodexState, read: SourceRead): ShardContent {
  const after = r.prior!.records;
  const out = shard(r, "append", path, newCodexState(prev.generation + 1), after, read);
  const active_generation = prev.generation + 1;
  out.marks.unshift({ kind: "generation_restore", after_order: after, active_generation });
  return out;
}

/** Interprets `read` on a copy of `state` and assembles the shard content. */
function shard(
  r: Run,
  kind: "replace" | "append",
  path: string,
  state: CodexState,
  nextOrder: number,
  read: SourceRead,
): ShardContent {
  const hint = r.unit.hint as { rel?: unknown } | undefined;
  const file = typeof hint?.rel === "string" ? hint.rel : basename(path);
  const pass = newLinePass({
    sessionId: r.unit.sessionId,
    file,
    state: structuredClone(state),
    nextOrder,
  });
  interpretLines(pass, read.lines);
  pass.state.content = read.mark;
  for (const [k, n] of Object.entries(read.skipped)) countSkip(pass.skipped, k, n);
  return {
    kind,
    records: pass.records,
    marks: pass.marks,
    cursors: { [path]: read.cursor },
    state: pass.state,
    meta: {
      project: pass.state.project,
      title: pass.state.title,
      parent_session_id: pass.state.parent,
      files: [path],
    },
    skipped: pass.skipped,
  };
}
