/**
 * The OpenAI Codex extractor (its format: FORMAT.md beside this file): one unit per thread (`codex:<thread-id>`),
 * read from its single rollout, plain `.jsonl` or immutable `.jsonl.zst`. Discovery is in
 * codex_discover.ts, reading in codex_source.ts, line rules in codex_lines.ts; this file
 * plugs into the shared entry flow (framework/entry_flow.ts: classify, gone/unchanged,
 * append, full) and decides, per sweep, how the shard moves on — the rename and content
 * mark cases live in the flow's `append` hook:
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
 * - no prior shard (or an unreadable prior state, even with the rollout unchanged) →
 *   "replace" at generation 0, the rewrite epoch one past the shard's
 *   (framework `nextRewriteEpoch`);
 * - a rollout rewritten while it is read (CursorMismatchError outside the fallbacks
 *   below) is retried within the sweep by the flow, from a fresh stat.
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
  type ClassifiedFile,
  countSkip,
  type EntryFlow,
  type Extractor,
  type ExtractOutcome,
  type FlowFullInput,
  nextRewriteEpoch,
  type PriorShard,
  resolveLimits,
  runEntryFlow,
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
  const flow = codexFlow(limits);
  return {
    source: "codex",
    discover: () => discoverCodex(homes, { maxEntries: limits.maxWalkEntries }),
    extract: (unit, prior, ctx) => runEntryFlow(unit, prior, { now: ctx.now, flow }),
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

function parseCodexState(raw: unknown): CodexState | null {
  const parsed = CodexStateSchema.safeParse(raw);
  return parsed.success ? parsed.data : null;
}

/**
 * Codex's hooks into the shared entry flow. The flow classifies the rollout against the
 * cursor under its OWN path, so a rename reaches `append` as `dropped` with the file
 * "new"; `append` never returns null (every case of the header has an answer there).
 */
function codexFlow(options: CodexExtractorOptions): EntryFlow<CodexState> {
  const run = (i: FlowFullInput): Run => ({ unit: i.unit, prior: i.prior, now: i.now, options });
  return {
    parseState: parseCodexState,
    // An unreadable state re-parses even when the rollout is unchanged: it cannot be
    // continued, and waiting for the next write would leave the shard stale meanwhile.
    reparseUnreadableState: true,
    append: (i) => continueCodex(run(i), i.state, i.files[0]!, false),
    full: (i) => {
      const state = i.prior ? parseCodexState(i.prior.state) : null;
      const f = i.files[0]!;
      // With a readable state, `full` only runs as the flow's retry after `append` met a
      // rollout rewritten mid-read: continue again from a fresh stat and classification.
      if (state) return continueCodex(run(i), state, f, true);
      const epoch = nextRewriteEpoch(latestCursor(i.prior), { shardExists: i.prior !== null });
      return replace(run(i), f.path, f.path.endsWith(".zst"), epoch);
    },
  };
}

/**
 * The prior cursor with the highest rewrite epoch: the shard's current epoch. A shard
 * holds one cursor; after a rename it is keyed by the old path, so look at all of them.
 */
function latestCursor(prior: PriorShard | null): FileCursor | null {
  let best: FileCursor | null = null;
  for (const c of Object.values(prior?.cursors ?? {})) {
    if (best === null || (c.rewrite_epoch ?? 0) > (best.rewrite_epoch ?? 0)) best = c;
  }
  return best;
}

/** Every case of the header with a prior shard and its readable state. */
async function continueCodex(
  r: Run,
  state: CodexState,
  f: ClassifiedFile,
  restat: boolean,
): Promise<ExtractOutcome> {
  const path = f.path;
  const prior = r.prior!;
  const st = restat ? await statSource(path) : f.stat;
  if (st === null || st.kind !== "file") return { kind: "gone" };
  const zst = path.endsWith(".zst");
  const latest = latestCursor(prior);
  const epoch = latest?.rewrite_epoch ?? 0;
  const reread = nextRewriteEpoch(latest, { shardExists: true });
  const own = prior.cursors[path] ?? null;
  // Not our path but our inode: a rename (archive, unarchive, another home on one volume).
  const base = own ??
    Object.values(prior.cursors).find((c) => c.dev === st.dev && c.ino === st.ino) ?? null;
  const mark = state.content ?? EMPTY_MARK;
  if (base) {
    // The flow classified against our own cursor; a rename's base (or a retry after a
    // mid-read rewrite) needs its own classification.
    const cls = own && !restat ? f.class : (await classifySource(path, base, { now: r.now })).class;
    if (cls.kind === "gone") return { kind: "gone" };
    if (cls.kind === "unchanged") {
      if (own) return { kind: "unchanged" };
      return shard(r, "append", path, state, prior.records, emptyRead(base, mark));
    }
    if (cls.kind === "appended" && !zst) {
      const read = await tryPlain(r, path, base);
      if (read) return shard(r, "append", path, state, prior.records, read);
    }
  }
  if (zst) {
    const load = await loadZst(path, { rewriteEpoch: epoch, maxBytes: r.options.maxZstBytes });
    if (!load.ok) {
      // Fail closed: keep what the shard has, remember the file so it is not retried
      // every sweep, and say why.
      const read = { ...emptyRead(load.cursor, mark), skipped: { [load.reason]: 1 } };
      return shard(r, "append", path, state, prior.records, read);
    }
    if (markHolds(load.content, mark)) {
      const read = zstLines(load.content, mark, load.cursor);
      return shard(r, "append", path, state, prior.records, read);
    }
    const cursor = { ...load.cursor, rewrite_epoch: reread };
    return restore(r, path, state, zstLines(load.content, null, cursor));
  }
  const read = await tryPlain(r, path, cursorFromMark(mark, st, base?.rewrite_epoch ?? epoch));
  if (read) return shard(r, "append", path, state, prior.records, read);
  const fresh = await readPlain(path, null, {
    rewriteEpoch: reread,
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
