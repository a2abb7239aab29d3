/**
 * The Claude Code extractor (formats.md §2). Hermetic: it takes `<CLAUDE_CONFIG_DIR>/projects`
 * roots as paths. One unit per session uuid, joined corpus-wide (claude_discover.ts):
 * the main `<uuid>.jsonl` first, then its subagent transcripts (role `subagent:<agentId>`).
 * Unit key `claude-code:<sessionId>`.
 *
 * Per sweep (the framework's entry flow, framework/entry_flow.ts): every file is classified
 * against its cursor. All unchanged → "unchanged"; every file gone → "gone". Otherwise an
 * APPEND is tried when the prior state is ours, no
 * file was rewritten or dropped and the main file is not new: the new rows must pass the
 * incremental rules (claude_lane.ts), which only accept rows whose outcome equals a full
 * parse. Anything else (a rewind, a moved leaf pointer, a replay burst, a rewrite) is a
 * FULL re-parse returning "replace", every cursor re-read from scratch with a bumped
 * rewrite_epoch. A full parse streams each file in FULL_CHUNK_BYTES increments, so memory
 * holds the records and a compact DAG, never the whole file. A torn trailing line is
 * never consumed; malformed and oversized lines are counted. Rewinds become ONE
 * `record_ids` mark after all records (claude_dag.ts); subagent files are never marked.
 * meta: project = the first row's cwd; title = custom-title, else ai-title (the last of
 * each), else summary, else the first user prose (≤100 chars); parent_session_id null.
 */
import { isAbsolute, relative } from "node:path";
import { readIncrement } from "../../cursor.ts";
import type { FileCursor } from "../../cursor_types.ts";
import type { SupersessionMark } from "../../record.ts";
import {
  type ClassifiedFile,
  countSkip,
  type EntryMeta,
  type Extractor,
  type ExtractOutcome,
  nextRewriteEpoch,
  type PriorShard,
  resolveLimits,
  runEntryFlow,
  type SessionUnit,
} from "../framework/plugin.ts";
import { ClaudeDag } from "./claude_dag.ts";
import { discoverClaude, MAX_DISCOVERY_ENTRIES, SIDECHAIN_CACHE } from "./claude_discover.ts";
import { LaneCursor } from "./claude_lane.ts";
import {
  type ClaudeState,
  emptyState,
  parseState,
  type Pass,
  type PassFile,
  passLines,
  pendingLeafHolds,
} from "./claude_pass.ts";

/** Bumped whenever extraction output for the same input changes. */
export const CLAUDE_PARSER_VERSION = 1;
/** Bytes read per step of a full parse. */
export const FULL_CHUNK_BYTES = 32 << 20;
/** The locator schema's bound on `file`. */
const REL_MAX_CHARS = 512;

/** The bounds' defaults, resolved through the framework's one resolver. */
export const CLAUDE_LIMITS: Readonly<{ maxDiscoveryEntries: number }> = Object.freeze({
  maxDiscoveryEntries: MAX_DISCOVERY_ENTRIES,
});

/** Roots of the extractor. */
export interface ClaudeRoots {
  /** `<CLAUDE_CONFIG_DIR>/projects` directories; a missing one is simply not present. */
  projectRoots: string[];
  /** Directory entries one discovery visits at most. @default MAX_DISCOVERY_ENTRIES */
  maxDiscoveryEntries?: number;
}

/** Creates the extractor over the given projects roots. */
export function createClaudeExtractor(roots: ClaudeRoots): Extractor {
  const { projectRoots } = roots;
  if (!Array.isArray(projectRoots) || projectRoots.some((r) => typeof r !== "string")) {
    throw new TypeError(`Option "projectRoots" must be an array of paths`);
  }
  const { maxDiscoveryEntries } = resolveLimits("Claude", CLAUDE_LIMITS, {
    maxDiscoveryEntries: roots.maxDiscoveryEntries,
  });
  // Main-transcript session ids of the latest discovery: resume replays are judged by it.
  let corpus: Set<string> | null = null;
  const discover = async () => {
    const d = await discoverClaude(projectRoots, {
      maxEntries: maxDiscoveryEntries,
      cache: SIDECHAIN_CACHE,
    });
    corpus = d.mainSessions;
    return { units: d.units, skipped: d.skipped };
  };
  return {
    source: "claude-code",
    discover,
    async extract(unit, prior, ctx) {
      if (corpus === null) await discover();
      return await extractClaude(unit, prior, ctx.now, { roots: projectRoots, corpus: corpus! });
    },
  };
}

interface Env {
  roots: readonly string[];
  corpus: ReadonlySet<string>;
}

async function extractClaude(
  unit: SessionUnit,
  prior: PriorShard | null,
  now: number,
  env: Env,
): Promise<ExtractOutcome> {
  const files: PassFile[] = unit.files.map((f) => ({
    path: f.path,
    main: f.role === "main",
    rel: relOf(env.roots, f.path),
  }));
  return await runEntryFlow<ClaudeState>(unit, prior, {
    now,
    flow: {
      parseState,
      append: async (input) => {
        const kinds = kindsOf(input.files);
        // A rewrite, a dropped file or a new main file changes earlier records' standing.
        const rewritten = input.files.some((f) => f.class.kind === "rewritten");
        const mainNew = files.some((f) => f.main && kinds.get(f.path) === "new");
        if (input.dropped || rewritten || mainNew) return null;
        return await appendPass(unit, input.prior, input.state, files, kinds, env);
      },
      full: (input) => fullParse(unit, prior, files, kindsOf(input.files), env),
    },
  });
}

function kindsOf(files: readonly ClassifiedFile[]): Map<string, string> {
  return new Map(files.map((f) => [f.path, f.class.kind]));
}

/** Continues from `state`; null when only a full parse can give the right answer. */
async function appendPass(
  unit: SessionUnit,
  prior: PriorShard,
  state: ClaudeState,
  files: PassFile[],
  kinds: Map<string, string>,
  env: Env,
): Promise<ExtractOutcome | null> {
  if (files.some((f) => f.main) && state.lane === null) return null;
  const p = newPass(unit, env, state, prior.records, null);
  p.lane = state.lane ? new LaneCursor(state.lane) : null;
  const cursors: Record<string, FileCursor> = {};
  for (const f of files) {
    const from = prior.cursors[f.path] ?? null;
    if (kinds.get(f.path) === "unchanged" && from) {
      cursors[f.path] = from;
      continue;
    }
    // A CursorMismatchError (rewritten since classification) makes the flow re-parse.
    const inc = await readIncrement(f.path, from, {});
    passLines(p, inc, f);
    if (f.main && !pendingLeafHolds(p)) return null;
    cursors[f.path] = inc.cursor;
    if (p.needFull) return null;
  }
  return { ...content(p, files, cursors, []), kind: "append" };
}

async function fullParse(
  unit: SessionUnit,
  prior: PriorShard | null,
  files: PassFile[],
  kinds: Map<string, string>,
  env: Env,
): Promise<ExtractOutcome> {
  const dag = new ClaudeDag();
  const p = newPass(unit, env, emptyState(), 0, { dag, seen: new Set(), mainProse: [] });
  const cursors: Record<string, FileCursor> = {};
  let hasMain = false;
  for (const f of files) {
    if (kinds.get(f.path) === "gone") continue;
    const epoch = nextRewriteEpoch(prior?.cursors[f.path], { shardExists: prior !== null });
    let cur: FileCursor | null = null;
    try {
      for (;;) {
        const inc = await readIncrement(f.path, cur, {
          maxBytes: FULL_CHUNK_BYTES,
          rewriteEpoch: epoch,
        });
        passLines(p, inc, f);
        const moved = cur === null || inc.cursor.offset > cur.offset;
        cur = inc.cursor;
        if (inc.complete || !moved) break;
      }
    } catch (err) {
      // Deleted since classification: the unit is read without it (the next sweep agrees).
      if (!(err instanceof Deno.errors.NotFound) || cur !== null) throw err;
      countSkip(p.skipped, "file_vanished");
      continue;
    }
    cursors[f.path] = cur;
    hasMain ||= f.main;
  }
  const marks: SupersessionMark[] = [];
  if (hasMain) {
    const { abandoned, lane } = dag.finish(p.full!.mainProse);
    p.state.lane = lane;
    const ids = p.records.filter((r) => !r.subagent && abandoned.has(r.id)).map((r) => r.id);
    if (ids.length) marks.push({ kind: "record_ids", after_order: p.records.length, ids });
  }
  return { ...content(p, files, cursors, marks), kind: "replace" };
}

function newPass(
  unit: SessionUnit,
  env: Env,
  state: ClaudeState,
  nextOrder: number,
  full: Pass["full"],
): Pass {
  return {
    sessionId: unit.sessionId,
    corpus: env.corpus,
    records: [],
    nextOrder,
    skipped: {},
    state,
    full,
    lane: null,
    pendingLeaf: null,
    needFull: false,
  };
}

function content(
  p: Pass,
  files: PassFile[],
  cursors: Record<string, FileCursor>,
  marks: SupersessionMark[],
) {
  const t = p.state.titles;
  const meta: EntryMeta = {
    project: p.state.project,
    title: t.custom ?? t.ai ?? t.summary ?? t.firstMain ?? t.firstAny,
    parent_session_id: null,
    files: files.map((f) => f.path),
  };
  return { records: p.records, marks, cursors, state: p.state, meta, skipped: p.skipped };
}

/** The file's path under the first projects root holding it (locators), within the bound. */
function relOf(roots: readonly string[], path: string): string {
  let rel = path;
  for (const root of roots) {
    const r = relative(root, path);
    if (r !== "" && !r.startsWith("..") && !isAbsolute(r)) {
      rel = r;
      break;
    }
  }
  if (rel.length <= REL_MAX_CHARS) return rel;
  // Keep whole trailing components: the session dir and file name identify it.
  const tail = rel.slice(rel.length - REL_MAX_CHARS);
  return tail.slice(tail.indexOf("/") + 1) || tail;
}
