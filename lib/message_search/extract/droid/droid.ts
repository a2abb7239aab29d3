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
import type { FileCursor } from "../../cursor_types.ts";
import type { MessageRecord } from "../../record.ts";
import {
  assertLineLimit,
  type ClassifiedFile,
  type EntryMeta,
  type Extractor,
  type ExtractOutcome,
  type FlowAppendInput,
  flowExtractor,
  type FlowFullInput,
  nextRewriteEpoch,
  readLineBytes,
  resolveLimits,
  RootSetCache,
  type SourcePlugin,
} from "../framework/plugin.ts";
import { discoverDroid, type DroidHeaderCache } from "./droid_discover.ts";
import { droidPass, type DroidState, newDroidState, parseDroidState } from "./droid_pass.ts";

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
  assertLineLimit("Droid", "maxLineBytes", limits.maxLineBytes);
  assertLineLimit("Droid", "maxHeaderBytes", limits.maxHeaderBytes);
  const homes = [...roots.homes];
  const cache = HEADER_CACHES.obtain(homes, () => new Map());
  return flowExtractor<DroidState>({
    source: "droid",
    discover: () => discoverDroid(homes, limits, cache),
    flow: {
      parseState: parseDroidState,
      append: (i) => appendDroid(i, homes, limits),
      full: (i) => fullDroid(i, homes, limits),
    },
  });
}

/**
 * Line-1 caches per home set, process-wide: the wiring builds extractors anew every sweep,
 * and a cache that died with its instance would re-read every header every sweep. Entries
 * are validated by file signature.
 */
const HEADER_CACHES = new RootSetCache<DroidHeaderCache>();

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
    // A sweep reads at most `maxSweepBytes` per file; the next sweep continues.
    const read = await readLineBytes(f.path, from, {
      maxBytes: o.limits.maxSweepBytes,
      maxLineBytes: o.limits.maxLineBytes,
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
