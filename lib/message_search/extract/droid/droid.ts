/**
 * The Factory Droid extractor (formats-more.md §5): one unit per session
 * (`droid:<session id>`): its JSONL plus the JSONL of every sub-agent session it called
 * (droid_discover.ts), read through the framework's entry flow; lines droid_lines.ts,
 * records droid_pass.ts.
 *
 * Sweep rules:
 * - unchanged → unchanged; every file gone → gone;
 * - every file unchanged, appended or new to the unit → "append", each file's new lines
 *   folded, orders continuing;
 * - anything else — above all a rewritten line 1 (Droid retitles a session in place
 *   [unc]: the prefix hash changes and every later offset may shift), or a file dropped
 *   from the unit → a full re-read published as "replace". Records are keyed by message
 *   id, so a re-read mints the same ids; nothing in a Droid file is superseded (a rewind
 *   forks a NEW session file, §5.4), so a replace loses nothing the file still holds.
 * Bounds: lines over `maxLineBytes` are skipped and counted (`oversized_line`); a sweep
 * reads at most `maxSweepBytes` per file, the next sweep continues.
 * meta: project = session_start cwd (the sanitized directory name is lossy); title =
 * sessionTitle/title, else the first human prompt; parent_session_id = `parent` (the
 * session a fork came from), else null.
 */
import { type Increment, MAX_LINE_BYTES, readIncrement } from "../../cursor.ts";
import type { FileCursor } from "../../cursor_types.ts";
import type { MessageRecord } from "../../record.ts";
import type { EntryMeta } from "../../store/types.ts";
import {
  type ClassifiedFile,
  type Extractor,
  type ExtractOutcome,
  type FlowAppendInput,
  type FlowFullInput,
  nextRewriteEpoch,
  resolveLimits,
  runEntryFlow,
  type SourcePlugin,
} from "../framework/plugin.ts";
import { discoverDroid, type DroidHeaderCache } from "./droid_discover.ts";
import {
  droidPass,
  type DroidState,
  type LineIn,
  newDroidState,
  parseDroidState,
} from "./droid_pass.ts";

/** Bumped whenever extraction output for the same input changes. */
export const DROID_PARSER_VERSION = 1;

/** The registry entry (extract/mod.ts `SOURCE_PLUGINS`): homes are Factory homes (`~/.factory`). */
export const DROID_PLUGIN: SourcePlugin = {
  source: "droid",
  parserVersion: DROID_PARSER_VERSION,
  build: (r) => createDroidExtractor({ homes: r.homes }),
};

/** Droid bounds (none documented; tool results are inline, so lines are capped). */
export const DROID_LIMITS = Object.freeze({
  maxLineBytes: 16 << 20,
  maxSweepBytes: 256 << 20,
  maxWalkEntries: 100_000,
  maxHeaderBytes: 256 << 10,
});
export type DroidLimits = { -readonly [K in keyof typeof DROID_LIMITS]: number };

/** Creates the extractor over Factory homes (each holding `sessions/`). */
export function createDroidExtractor(
  roots: { homes: string[] },
  options: { limits?: Partial<DroidLimits> } = {},
): Extractor {
  const limits = resolveLimits<DroidLimits>("Droid", DROID_LIMITS, options.limits);
  if (limits.maxLineBytes > MAX_LINE_BYTES || limits.maxHeaderBytes > MAX_LINE_BYTES) {
    throw new RangeError(`Droid line limits must be at most ${MAX_LINE_BYTES}`);
  }
  const homes = [...roots.homes];
  const cache = headerCacheFor(homes);
  const flow = {
    parseState: parseDroidState,
    append: (i: FlowAppendInput<DroidState>) => appendDroid(i, homes, limits),
    full: (i: FlowFullInput) => fullDroid(i, homes, limits),
  };
  return {
    source: "droid",
    discover: () => discoverDroid(homes, limits, cache),
    extract: (unit, prior, ctx) => runEntryFlow(unit, prior, { now: ctx.now, flow }),
  };
}

/**
 * Line-1 caches per home set, process-wide: the wiring builds extractors anew every sweep,
 * and a cache that died with its instance would re-read every header every sweep. Entries
 * are validated by file signature; the oldest home set is dropped past the cap.
 */
const HEADER_CACHES = new Map<string, DroidHeaderCache>();
const HEADER_CACHE_HOME_SETS = 16;

function headerCacheFor(homes: readonly string[]): DroidHeaderCache {
  const key = JSON.stringify(homes);
  const cache = HEADER_CACHES.get(key) ?? new Map();
  HEADER_CACHES.delete(key);
  HEADER_CACHES.set(key, cache);
  if (HEADER_CACHES.size > HEADER_CACHE_HOME_SETS) {
    HEADER_CACHES.delete(HEADER_CACHES.keys().next().value!);
  }
  return cache;
}

interface LinesRead {
  lines: LineIn[];
  cursor: FileCursor;
  oversized: number;
}

/** readIncrement to the end of the file or the sweep budget, across oversized-line stops. */
async function readLines(
  path: string,
  from: FileCursor | null,
  o: { limits: DroidLimits; rewriteEpoch?: number },
): Promise<LinesRead> {
  const out: LinesRead = { lines: [], cursor: from!, oversized: 0 };
  let cursor = from;
  let budget = o.limits.maxSweepBytes;
  for (;;) {
    const inc: Increment = await readIncrement(path, cursor, {
      maxBytes: budget,
      maxLineBytes: o.limits.maxLineBytes,
      ...(cursor === null && o.rewriteEpoch !== undefined ? { rewriteEpoch: o.rewriteEpoch } : {}),
    });
    for (const s of inc.lines) {
      out.lines.push({
        lineNo: s.lineNo,
        bytes: inc.bytes.subarray(s.start - inc.baseOffset, s.end - inc.baseOffset),
      });
    }
    out.oversized += inc.oversizedLines.length;
    out.cursor = inc.cursor;
    budget -= inc.bytes.length;
    if (inc.complete || budget <= 0 || inc.cursor.offset <= (cursor?.offset ?? 0)) return out;
    cursor = inc.cursor;
  }
}

/** Locator `file`: the path under its Factory home (cut to the locator's 512 chars). */
function relOf(homes: readonly string[], path: string): string {
  const home = homes.find((h) => path.startsWith(`${h}/`));
  const rel = home ? path.slice(home.length + 1) : path.split("/").slice(-3).join("/");
  return rel.length <= 512 ? rel : path.split("/").slice(-1)[0]!.slice(-512);
}

interface Folded {
  records: MessageRecord[];
  skipped: Record<string, number>;
  cursors: Record<string, FileCursor>;
  state: DroidState;
}

async function foldFiles(
  i: FlowFullInput,
  reads: { f: ClassifiedFile; from: FileCursor | null }[],
  o: { state: DroidState; nextOrder: number; homes: readonly string[]; limits: DroidLimits },
): Promise<Folded> {
  const out: Folded = { records: [], skipped: {}, cursors: {}, state: o.state };
  for (const { f, from } of reads) {
    if (f.stat === null || f.class.kind === "gone") continue;
    const read = await readLines(f.path, from, {
      limits: o.limits,
      rewriteEpoch: nextRewriteEpoch(f.cursor, { shardExists: i.prior !== null }),
    });
    const sub = f.role === "subagent";
    const stem = f.path.slice(f.path.lastIndexOf("/") + 1).replace(/\.jsonl$/, "");
    const r = droidPass(read.lines, out.state, {
      sessionId: i.unit.sessionId,
      file: relOf(o.homes, f.path),
      tag: sub ? `${stem}:` : "",
      subagent: sub,
      nextOrder: o.nextOrder + out.records.length,
    });
    out.records.push(...r.records);
    out.state = r.state;
    out.cursors[f.path] = read.cursor;
    for (const [k, n] of Object.entries(r.skipped)) out.skipped[k] = (out.skipped[k] ?? 0) + n;
    if (read.oversized > 0) {
      out.skipped.oversized_line = (out.skipped.oversized_line ?? 0) + read.oversized;
    }
  }
  return out;
}

function metaOf(i: FlowFullInput, s: DroidState, cursors: Record<string, FileCursor>): EntryMeta {
  return {
    project: s.cwd,
    title: s.title ?? s.first_user,
    parent_session_id: s.parent,
    files: i.files.map((f) => f.path).filter((p) => cursors[p] !== undefined),
  };
}

async function appendDroid(
  i: FlowAppendInput<DroidState>,
  homes: readonly string[],
  limits: DroidLimits,
): Promise<ExtractOutcome | null> {
  const ok = (k: string) => k === "unchanged" || k === "appended" || k === "new";
  if (i.dropped || !i.files.every((f) => ok(f.class.kind))) return null;
  const moving = i.files.filter((f) => f.class.kind !== "unchanged");
  const r = await foldFiles(
    i,
    moving.map((f) => ({ f, from: f.class.kind === "new" ? null : f.cursor })),
    { state: i.state, nextOrder: i.prior.records, homes, limits },
  );
  const cursors = { ...i.prior.cursors, ...r.cursors };
  return {
    kind: "append",
    records: r.records,
    marks: [],
    cursors,
    state: r.state,
    meta: metaOf(i, r.state, cursors),
    skipped: r.skipped,
  };
}

async function fullDroid(
  i: FlowFullInput,
  homes: readonly string[],
  limits: DroidLimits,
): Promise<ExtractOutcome> {
  const r = await foldFiles(i, i.files.map((f) => ({ f, from: null })), {
    state: newDroidState(),
    nextOrder: 0,
    homes,
    limits,
  });
  return {
    kind: "replace",
    records: r.records,
    marks: [],
    cursors: r.cursors,
    state: r.state,
    meta: metaOf(i, r.state, r.cursors),
    skipped: r.skipped,
  };
}
