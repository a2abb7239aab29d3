/**
 * The Pi coding-agent extractor: one v3 session file = one unit (`pi:<header id>`), read
 * through the shared cursors. Hermetic: it takes agent dirs (PI_CODING_AGENT_DIR values)
 * as paths. Discovery is pi_discover.ts, line shapes pi_entries.ts, the tree pi_tree.ts,
 * bounds pi_limits.ts.
 *
 * Sweep rules:
 * - unchanged → unchanged; file gone → gone.
 * - appended, with a usable state → pi_tree `appendPass` when the new entries only extend
 *   the active chain (exact: equals a full pass), else a full re-parse. Any append may
 *   move the leaf and abandon a branch, which changes earlier records' standing, so a
 *   full pass ("replace", rewrite_epoch bumped) is the fallback; Pi files are small
 *   enough that this is cheap, and the linear case is the steady state.
 * - new / rewritten (Pi rewrites v1/v2 files when it migrates them) → full pass.
 * Bounds (fail-closed: never a partial publish): a file over `maxFileBytes`, any line
 * over `maxLineBytes`, more than `maxEntries` entries, or a line 1 that is no longer a
 * session header (or now names another session) publishes the unit EMPTY, with the
 * reason counted once in `skipped` and kept in `state.failed`. The cursor still advances:
 * an unchanged failed file classifies unchanged from a stat, and an appended one (every
 * reason survives an append) only moves its cursor one line on, never re-read in full.
 * Only a rewrite (or a re-derivation) parses it again.
 * Versions: v2 files (ids present) are read like v3; v1 entries have no ids, so no tree
 * can be built; they are counted (`v1_entry_without_id`) and yield nothing until Pi
 * migrates the file, which the cursor then sees as a rewrite.
 * meta: project = header cwd; title = last session_info name, else the first user prose
 * (≤ 100 code points); parent_session_id = the header id of `parentSession` when that
 * path lies in one of our session dirs (pi_discover `parentIdOf`), else null.
 */
import { lineText } from "../../../durable/mod.ts";
import { CursorMismatchError, type Increment, readIncrement } from "../../cursor.ts";
import type { FileCursor } from "../../cursor_types.ts";
import {
  type ClassifiedFile,
  type EntryMeta,
  type Extractor,
  type ExtractOutcome,
  nextRewriteEpoch,
  type PriorShard,
  RootSetCache,
  runEntryFlow,
  type SessionUnit,
} from "../framework/plugin.ts";
import { discoverPi, type HeaderCache, parentIdOf, sessionIdOf } from "./pi_discover.ts";
import { parseHeader } from "./pi_entries.ts";
import { type PiLimits, resolvePiLimits } from "./pi_limits.ts";
import { appendPass, fullPass, isPiState, type PassContext, type PiState } from "./pi_tree.ts";

/** Bumped whenever extraction output for the same input changes. */
export const PI_PARSER_VERSION = 1;

/** Header caches per agent-dir set, process-wide (entries are validated by file signature). */
const HEADER_CACHES = new RootSetCache<HeaderCache>();

export { PI_LIMITS, type PiLimits } from "./pi_limits.ts";

/** Options for {@link createPiExtractor}. */
export interface PiExtractorOptions {
  /** Overrides of {@link PI_LIMITS} (tests shrink them). */
  limits?: Partial<PiLimits>;
}

/** Creates the extractor over Pi agent dirs (each holding `sessions/`). */
export function createPiExtractor(
  roots: { agentDirs: string[] },
  options: PiExtractorOptions = {},
): Extractor {
  const limits = resolvePiLimits(options.limits);
  const agentDirs = [...roots.agentDirs];
  return {
    source: "pi",
    discover: async () => {
      // Shared across instances: the wiring rebuilds extractors every sweep, and a cache
      // that died with its instance made every sweep re-read every header.
      const r = await discoverPi(agentDirs, limits, HEADER_CACHES.get(agentDirs) ?? new Map());
      HEADER_CACHES.set(agentDirs, r.cache);
      return r.discovery;
    },
    extract: (unit, prior, ctx) => extractPi(unit, prior, ctx.now, { agentDirs, limits }),
  };
}

interface Env {
  agentDirs: string[];
  limits: PiLimits;
}

async function extractPi(
  unit: SessionUnit,
  prior: PriorShard | null,
  now: number,
  env: Env,
): Promise<ExtractOutcome> {
  const ctx: PassContext = {
    sessionId: unit.sessionId,
    file: relFile(unit, unit.files[0]?.path ?? ""),
    maxEntries: env.limits.maxEntries,
  };
  // A file past the byte bound is never read whole: only a failed state's stub moves on.
  const fits = (f: ClassifiedFile) => (f.stat?.size ?? 0) <= env.limits.maxFileBytes;
  return await runEntryFlow<PiState>(unit, prior, {
    now,
    flow: {
      parseState: (raw) => isPiState(raw) ? raw as PiState : null,
      append: async ({ files, prior, state }) => {
        const f = files[0]!;
        if (f.class.kind !== "appended" || !f.cursor) return null;
        if (!fits(f) && state.failed === null) return null;
        return await continueAppend(f.path, f.cursor, prior.records, state, ctx, env);
      },
      full: async ({ files }) => {
        const f = files[0]!;
        const epoch = nextRewriteEpoch(f.cursor);
        if (!fits(f)) return await failClosed(f.path, "file_too_large", epoch, env);
        return await fullParse(unit, f.path, ctx, epoch, env);
      },
    },
  });
}

/**
 * The append path; null when only a full parse can answer (rewritten meanwhile, a new
 * branch or root, a bound reached).
 */
async function continueAppend(
  path: string,
  cursor: FileCursor,
  nextOrder: number,
  state: PiState,
  ctx: PassContext,
  env: Env,
): Promise<ExtractOutcome | null> {
  if (state.failed !== null) {
    // Every failure reason survives an append (size only grows; the oversized line, the
    // excess entries and line 1 stay), so only the cursor moves: no re-read, no recount.
    const stub = await advanceStub(path, cursor, env);
    if (stub === null) return null;
    const meta = metaOf(state, path);
    return {
      kind: "append",
      records: [],
      marks: [],
      cursors: { [path]: stub },
      state,
      meta,
      skipped: {},
    };
  }
  // A CursorMismatchError (rewritten since classification) makes the flow re-read it.
  const inc = await readIncrement(path, cursor, readOptions(env));
  if (inc.cursor.size > env.limits.maxFileBytes) return null;
  const r = appendPass(inc, state, nextOrder, ctx);
  if (r === null) return null;
  return { kind: "append", ...r, cursors: { [path]: inc.cursor }, meta: metaOf(r.state, path) };
}

async function fullParse(
  unit: SessionUnit,
  path: string,
  ctx: PassContext,
  epoch: number,
  env: Env,
): Promise<ExtractOutcome> {
  const inc = await readIncrement(path, null, { ...readOptions(env), rewriteEpoch: epoch });
  const fail = (reason: string, skipped: Record<string, number> = {}) =>
    closed(path, reason, inc, skipped);
  if (inc.cursor.size > env.limits.maxFileBytes) return fail("file_too_large");
  if (inc.oversizedLines.length > 0) return fail("oversized_line");
  const first = inc.lines[0];
  const header = first?.lineNo === 1
    ? parseHeader(lineText(inc.bytes, first, inc.baseOffset))
    : null;
  if (header === null) return fail("header_invalid");
  // Pi truncates a headerless file and writes a fresh header (new id) into it: that is a
  // different session now, which discovery will report under its own key.
  if (sessionIdOf(header, path.slice(path.lastIndexOf("/") + 1)) !== unit.sessionId) {
    return fail("header_changed");
  }
  const parent = await parentIdOf(header.parentSession, env.agentDirs, env.limits.maxHeaderBytes);
  const r = fullPass(inc, { version: header.version, cwd: header.cwd, parent }, ctx);
  if ("failed" in r) return fail(r.failed, r.skipped);
  return { kind: "replace", ...r, cursors: { [path]: inc.cursor }, meta: metaOf(r.state, path) };
}

function readOptions(env: Env): { maxBytes: number; maxLineBytes: number } {
  // One byte past the file bound: a file that grew past it is seen, not silently cut.
  return { maxBytes: env.limits.maxFileBytes + 1, maxLineBytes: env.limits.maxLineBytes };
}

/** Fail-closed without reading the body: only line 1 is read, to mint a cursor. */
async function failClosed(
  path: string,
  reason: string,
  epoch: number,
  env: Env,
): Promise<ExtractOutcome> {
  const inc = await readIncrement(path, null, {
    maxBytes: 1,
    maxLineBytes: env.limits.maxHeaderBytes,
    rewriteEpoch: epoch,
    claimWholeFile: true,
  });
  return closed(path, reason, inc, {});
}

/** Moves a failed file's cursor past at most one more line; null if it was rewritten. */
async function advanceStub(path: string, cursor: FileCursor, env: Env): Promise<FileCursor | null> {
  try {
    const inc = await readIncrement(path, cursor, {
      maxBytes: 1,
      maxLineBytes: env.limits.maxHeaderBytes,
      claimWholeFile: true,
    });
    return inc.cursor;
  } catch (err) {
    if (err instanceof CursorMismatchError) return null; // Rewritten: the caller re-parses.
    throw err;
  }
}

/** An empty replace: publishes nothing of a file that blew a bound, counts why. */
function closed(
  path: string,
  reason: string,
  inc: Increment,
  skipped: Record<string, number>,
): ExtractOutcome {
  const state: PiState = {
    v: 1,
    leaf: null,
    entries: 0,
    version: 0,
    cwd: null,
    parent: null,
    name: null,
    first_user: null,
    failed: reason,
  };
  return {
    kind: "replace",
    records: [],
    marks: [],
    cursors: { [path]: inc.cursor },
    state,
    meta: metaOf(state, path),
    skipped: { ...skipped, [reason]: (skipped[reason] ?? 0) + 1 },
  };
}

function metaOf(state: PiState, path: string): EntryMeta {
  return {
    project: state.cwd,
    title: state.name ?? state.first_user,
    parent_session_id: state.parent,
    files: [path],
  };
}

/** The locator's `file`: relative to the agent dir, i.e. `sessions/<dir>/<file>`. */
function relFile(unit: SessionUnit, path: string): string {
  const hinted = unit.hint?.rel;
  if (typeof hinted === "string") return hinted;
  const parts = path.split("/");
  return parts.slice(-3).join("/");
}
