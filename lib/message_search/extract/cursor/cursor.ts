/**
 * The Cursor CLI extractor (formats-more.md §4): one unit per chat (`cursor:<chat id>`):
 * the main transcript plus any sub-agent transcripts, read through the framework's entry
 * flow. Discovery cursor_discover.ts, line rules cursor_lines.ts, records cursor_pass.ts.
 *
 * Sweep rules (JSONL main transcript):
 * - unchanged → unchanged; every file gone → gone;
 * - every file unchanged, appended or new to the unit (a new sub-agent transcript) →
 *   "append": each file's new lines folded, orders continuing;
 * - a file rewritten (shrunk, prefix or anchor changed — whether Cursor ever rewrites a
 *   transcript is unknown [unc], so any rewrite is handled) or dropped from the unit →
 *   generation + 1: every file re-read, every record re-emitted with `@g<n>` ids behind a
 *   `generation_restore` mark (the Codex in-place policy). Text that vanished stays
 *   searchable, superseded; text that survived is active in the new generation (its
 *   older copy superseded: Cursor has no ids to tell the two apart more precisely);
 * - no prior shard or an unreadable state → "replace" at generation 0.
 * Legacy `.txt` main transcripts (no longer written) are parsed whole on every change
 * and published as "replace": a block spans many lines, so no line-level append exists.
 * `store.db` is not read: the transcripts hold the same prose, and the blob-DAG format
 * and its supersession semantics are [unc] (§4.4); reading it would need SQLite for no
 * prose the transcript lacks.
 * Bounds: lines over `maxLineBytes` are skipped and counted (`oversized_line`); a sweep
 * reads at most `maxSweepBytes` per file and the next sweep continues.
 * meta: project null (the encoded project dir is lossy and the JSONL has no cwd); title
 * = the first human prompt.
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
  type LineBytesRead,
  nextRewriteEpoch,
  readLineBytes,
  resolveLimits,
  type SessionUnit,
  type SourcePlugin,
} from "../framework/plugin.ts";
import { discoverCursor } from "./cursor_discover.ts";
import {
  type CursorFileContext,
  cursorJsonlPass,
  type CursorState,
  cursorTxtPass,
  parseCursorState,
} from "./cursor_pass.ts";

/** Bumped whenever extraction output for the same input changes. */
export const CURSOR_PARSER_VERSION = 1;

/** The registry entry (extract/mod.ts `SOURCE_PLUGINS`): homes are Cursor config dirs. */
export const CURSOR_PLUGIN: SourcePlugin = {
  source: "cursor",
  parserVersion: CURSOR_PARSER_VERSION,
  build: (r) => createCursorExtractor({ homes: r.homes }),
};

/** Cursor bounds. Transcripts are typically < 500 KiB (agentsview caps files at 10 MiB). */
export const CURSOR_LIMITS = Object.freeze({
  maxLineBytes: 16 << 20,
  maxSweepBytes: 256 << 20,
  maxWalkEntries: 100_000,
});
export type CursorLimits = { -readonly [K in keyof typeof CURSOR_LIMITS]: number };

/** Creates the extractor over Cursor config dirs (each holding `projects/`). */
export function createCursorExtractor(
  roots: { homes: string[] },
  options: { limits?: Partial<CursorLimits> } = {},
): Extractor {
  const limits = resolveLimits<CursorLimits>("Cursor", CURSOR_LIMITS, options.limits);
  assertLineLimit("Cursor", "maxLineBytes", limits.maxLineBytes);
  const dirs = [...roots.homes];
  return flowExtractor<CursorState>({
    source: "cursor",
    discover: () => discoverCursor(dirs, limits),
    flow: {
      parseState: parseCursorState,
      append: (i) => appendCursor(i, limits),
      full: (i) => fullCursor(i, limits),
    },
  });
}

/** Locator `file`: the path under the Cursor root, cut to the locator's 512-char cap. */
function relOf(unit: SessionUnit, path: string): string {
  const root = typeof unit.hint?.root === "string" ? unit.hint.root : null;
  const rel = root !== null && path.startsWith(`${root}/`)
    ? path.slice(root.length + 1)
    : path.split("/").slice(-4).join("/");
  return rel.length <= 512 ? rel : path.split("/").slice(-2).join("/").slice(-512);
}

function fileContext(
  unit: SessionUnit,
  f: ClassifiedFile,
  read: LineBytesRead,
  now: number,
  nextOrder: number,
): CursorFileContext {
  const sub = f.role === "subagent";
  const stem = f.path.slice(f.path.lastIndexOf("/") + 1).replace(/\.jsonl$/, "");
  return {
    sessionId: unit.sessionId,
    file: relOf(unit, f.path),
    tag: sub ? `${stem}:` : "",
    subagent: sub,
    ts_ms: read.cursor.mtime_ms ?? now,
    nextOrder,
  };
}

interface Folded {
  records: MessageRecord[];
  skipped: Record<string, number>;
  cursors: Record<string, FileCursor>;
  state: CursorState;
}

/** Reads `files` (each from its `from` cursor) and folds them in unit order. */
async function foldFiles(
  i: FlowFullInput,
  reads: { f: ClassifiedFile; from: FileCursor | null; epoch?: number }[],
  state: CursorState,
  nextOrder: number,
  limits: CursorLimits,
): Promise<Folded> {
  const out: Folded = { records: [], skipped: {}, cursors: {}, state };
  for (const { f, from, epoch } of reads) {
    if (f.stat === null || f.class.kind === "gone") continue;
    // A sweep reads at most `maxSweepBytes` per file; the next sweep continues.
    const read = await readLineBytes(f.path, from, {
      maxBytes: limits.maxSweepBytes,
      maxLineBytes: limits.maxLineBytes,
      rewriteEpoch: epoch,
    });
    const ctx = fileContext(i.unit, f, read, i.now, nextOrder + out.records.length);
    const txt = f.role === "main" && f.path.endsWith(".txt");
    const r = txt
      ? cursorTxtPass(read.lines, out.state, ctx)
      : cursorJsonlPass(read.lines, out.state, ctx);
    out.records.push(...r.records);
    out.state = r.state;
    out.cursors[f.path] = read.cursor;
    for (const [k, n] of Object.entries(r.skipped)) out.skipped[k] = (out.skipped[k] ?? 0) + n;
    if (read.oversized > 0) {
      out.skipped.oversized_line = (out.skipped.oversized_line ?? 0) + read.oversized;
    }
  }
  const skips = { ...out.state.skips };
  for (const [k, n] of Object.entries(out.skipped)) skips[k] = (skips[k] ?? 0) + n;
  out.state = { ...out.state, skips };
  return out;
}

function metaOf(
  i: FlowFullInput,
  state: CursorState,
  cursors: Record<string, FileCursor>,
): EntryMeta {
  return {
    project: null,
    title: state.first_user,
    parent_session_id: null,
    files: i.files.map((f) => f.path).filter((p) => cursors[p] !== undefined),
  };
}

async function appendCursor(
  i: FlowAppendInput<CursorState>,
  limits: CursorLimits,
): Promise<ExtractOutcome | null> {
  if (i.dropped) return null;
  const txt = i.files.some((f) => f.role === "main" && f.path.endsWith(".txt"));
  const ok = (k: string) => k === "unchanged" || k === "appended" || k === "new";
  if (txt || !i.files.every((f) => ok(f.class.kind))) return null;
  const moving = i.files.filter((f) => f.class.kind !== "unchanged");
  const r = await foldFiles(
    i,
    moving.map((f) => ({
      f,
      from: f.class.kind === "new" ? null : f.cursor,
      epoch: nextRewriteEpoch(f.cursor, { shardExists: true }),
    })),
    i.state,
    i.prior.records,
    limits,
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

async function fullCursor(i: FlowFullInput, limits: CursorLimits): Promise<ExtractOutcome> {
  const prior = i.prior ? parseCursorState(i.prior.state) : null;
  const txt = i.files.some((f) => f.role === "main" && f.path.endsWith(".txt"));
  const restart = i.prior !== null && prior !== null && !txt;
  const generation = restart ? prior!.generation + 1 : 0;
  const after = restart ? i.prior!.records : 0;
  const r = await foldFiles(
    i,
    i.files.map((f) => ({
      f,
      from: null,
      epoch: nextRewriteEpoch(f.cursor, { shardExists: i.prior !== null }),
    })),
    { v: 1, generation, first_user: null, skips: {} },
    after,
    limits,
  );
  // The shard's skipped is cumulative: a restart re-read everything, so only the excess
  // over what was already published is reported.
  const skipped: Record<string, number> = {};
  for (const [k, n] of Object.entries(r.state.skips)) {
    const was = restart ? prior!.skips[k] ?? 0 : 0;
    if (n > was) skipped[k] = n - was;
  }
  const base = {
    records: r.records,
    cursors: r.cursors,
    state: r.state,
    meta: metaOf(i, r.state, r.cursors),
    skipped,
  };
  if (!restart) return { kind: "replace", marks: [], ...base };
  return {
    kind: "append",
    marks: [{ kind: "generation_restore", after_order: after, active_generation: generation }],
    ...base,
  };
}
