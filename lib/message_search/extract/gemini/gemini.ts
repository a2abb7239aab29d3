/**
 * The Gemini CLI extractor: one session file = one unit (`gemini:<sessionId>`), run
 * through the framework's entry flow. Hermetic: it takes `.gemini` directories as paths
 * (the wiring resolves `$GEMINI_CLI_HOME/.gemini`, else `~/.gemini`). Discovery is
 * gemini_discover.ts, line shapes gemini_events.ts, prose rules gemini_prose.ts, the
 * replay and its exact append gemini_replay.ts, bounds gemini_limits.ts.
 *
 * Sweep rules:
 * - JSONL, appended with a usable state → `appendPass` over the new complete lines when
 *   their effect is certain (equals a full pass); otherwise a full replay ("replace",
 *   rewrite epoch bumped). A torn last line is never read: it waits for the next sweep.
 * - legacy `.json` (whole file, rewritten in place by old CLIs, not atomically): any
 *   change re-parses the whole file; a parse error is a writer mid-write, so the last
 *   publish stands ("unchanged") and the next sweep retries. A rewind there truncates the
 *   list with no marker; the vanished text is dropped with the replace (known gap: the
 *   extractor sees no prior records to keep as superseded).
 * Bounds (fail-closed, never a partial publish): a file over `maxFileBytes` or with more
 * than `maxMessages` ids publishes the unit EMPTY with the reason counted and kept in
 * `state.failed`. A line over `maxLineBytes` is skipped and counted (`oversized_line`);
 * the rest of the file is still read, so no other message is lost.
 * meta: project = the recovered project root; title = Gemini's `summary`, else the first
 * user prose (≤ 100 code points); parent_session_id = the parent of a subagent file.
 */
import { readIncrement, readSourceRange } from "../../cursor.ts";
import type { FileCursor } from "../../cursor_types.ts";
import {
  decodeLine,
  type EntryFlow,
  type EntryMeta,
  type Extractor,
  type ExtractOutcome,
  type FlowAppendInput,
  flowExtractor,
  type FlowFullInput,
  nextRewriteEpoch,
  readLineBytes,
  RootSetCache,
  type SourceLineBytes,
} from "../framework/plugin.ts";
import {
  discoverGemini,
  type GeminiHeaderCache,
  type GeminiHint,
  hintOf,
} from "./gemini_discover.ts";
import { eventOf, type GeminiEvent, lineEvent } from "./gemini_events.ts";
import { type GeminiLimits, resolveGeminiLimits } from "./gemini_limits.ts";
import {
  appendPass,
  fullPass,
  type GeminiPassContext,
  type GeminiState,
  isGeminiState,
} from "./gemini_replay.ts";

/** Bumped whenever extraction output for the same input changes. */
export const GEMINI_PARSER_VERSION = 1;

export { GEMINI_LIMITS, type GeminiLimits } from "./gemini_limits.ts";

/** Metadata caches per root set, process-wide (validated by file signature). */
const HEADER_CACHES = new RootSetCache<GeminiHeaderCache>();

/** Options for {@link createGeminiExtractor}. */
export interface GeminiExtractorOptions {
  /** Overrides of {@link GEMINI_LIMITS} (tests shrink them). */
  limits?: Partial<GeminiLimits>;
}

/** Creates the extractor over `.gemini` directories (each holding `tmp/`). */
export function createGeminiExtractor(
  roots: { geminiDirs: string[] },
  options: GeminiExtractorOptions = {},
): Extractor {
  const limits = resolveGeminiLimits(options.limits);
  const dirs = [...roots.geminiDirs];
  return flowExtractor({
    source: "gemini",
    discover: async () => {
      const r = await discoverGemini(dirs, limits, HEADER_CACHES.get(dirs) ?? new Map());
      HEADER_CACHES.set(dirs, r.cache);
      return r.discovery;
    },
    flow: flowOf(limits),
  });
}

function flowOf(limits: GeminiLimits): EntryFlow<GeminiState> {
  return {
    parseState: (raw) => (isGeminiState(raw) ? raw : null),
    append: (input) => appendJsonl(input, limits),
    full: (input) => full(input, limits),
  };
}

function passContext(input: FlowFullInput, limits: GeminiLimits): GeminiPassContext {
  const h = hintOf(input.unit);
  return {
    sessionId: input.unit.sessionId,
    file: h.rel,
    subagent: h.subagent,
    maxMessages: limits.maxMessages,
  };
}

/**
 * The lines' events, decoded and parsed one at a time as the replay takes them: a line's
 * text and its parsed JSON (tool output and all) are garbage as soon as its prose is
 * taken, instead of every line's text and object living until the pass ends (the bench's
 * Gemini sessions, 28.5k messages, in one thread: the heap peaked at 235 MiB with arrays
 * of lines and events). A consumer that stops early drains the rest, so every malformed
 * line is still counted.
 */
function* eventsOf(
  lines: SourceLineBytes[],
  skipped: Record<string, number>,
): Generator<GeminiEvent> {
  for (const l of lines) {
    const e = lineEvent(decodeLine(l), { line: l.lineNo, offset: l.offset }, skipped);
    if (e !== null) yield e;
  }
}

/**
 * `events` for a consumer that may stop early without closing it (an iterator without
 * `return`: a for-of that breaks leaves it open), so {@link drain} can finish it.
 */
function unclosable(events: Iterator<GeminiEvent>): Iterable<GeminiEvent> {
  return { [Symbol.iterator]: () => ({ next: () => events.next() }) };
}

/** Parses the lines an early-stopping consumer left, for their skip counts only. */
function drain(events: Iterator<GeminiEvent>): void {
  while (!events.next().done) { /* counting */ }
}

function readOptions(limits: GeminiLimits) {
  // One byte past the file bound: a file that grew past it is seen, not silently cut.
  return { maxBytes: limits.maxFileBytes + 1, maxLineBytes: limits.maxLineBytes };
}

async function appendJsonl(
  input: FlowAppendInput<GeminiState>,
  limits: GeminiLimits,
): Promise<ExtractOutcome | null> {
  const f = input.files[0];
  const h = hintOf(input.unit);
  if (!f || h.format !== "jsonl" || f.class.kind !== "appended" || f.cursor === null) return null;
  if (input.state.failed !== null) return null;
  const read = await readLineBytes(f.path, f.cursor, readOptions(limits));
  if (read.cursor.size > limits.maxFileBytes) return null;
  const skipped: Record<string, number> = {};
  if (read.oversized > 0) skipped.oversized_line = read.oversized;
  const r = appendPass(
    eventsOf(read.lines, skipped),
    input.state,
    input.prior.records,
    passContext(input, limits),
    skipped,
  );
  if (r === null) return null;
  return {
    kind: "append",
    ...r,
    cursors: { [f.path]: read.cursor },
    meta: metaOf(r.state, h, f.path),
  };
}

async function full(input: FlowFullInput, limits: GeminiLimits): Promise<ExtractOutcome> {
  const f = input.files[0];
  if (!f || f.stat === null) return { kind: "gone" };
  const h = hintOf(input.unit);
  const epoch = nextRewriteEpoch(f.cursor);
  const ctx = passContext(input, limits);
  if (f.stat.size > limits.maxFileBytes) {
    return closed(f.path, h, "file_too_large", await stubCursor(f.path, epoch, limits), {});
  }
  if (h.format === "json") return await fullLegacy(input, f.path, h, epoch, limits);
  const read = await readLineBytes(f.path, null, { ...readOptions(limits), rewriteEpoch: epoch });
  const skipped: Record<string, number> = {};
  if (read.oversized > 0) skipped.oversized_line = read.oversized;
  if (read.cursor.size > limits.maxFileBytes) {
    return closed(f.path, h, "file_too_large", read.cursor, skipped);
  }
  const events = eventsOf(read.lines, skipped);
  const r = fullPass(unclosable(events), ctx, skipped);
  if ("failed" in r) {
    drain(events);
    return closed(f.path, h, r.failed, read.cursor, r.skipped);
  }
  return {
    kind: "replace",
    ...r,
    cursors: { [f.path]: read.cursor },
    meta: metaOf(r.state, h, f.path),
  };
}

/** The legacy whole-file JSON: one object, re-parsed whole on any change. */
async function fullLegacy(
  input: FlowFullInput,
  path: string,
  h: GeminiHint,
  epoch: number,
  limits: GeminiLimits,
): Promise<ExtractOutcome> {
  // Cursor first, bytes second: a rewrite after the cursor is seen by the next sweep.
  const cursor = await stubCursor(path, epoch, limits);
  const bytes = await readSourceRange(path, 0, limits.maxFileBytes + 1, { expected: null });
  const skipped: Record<string, number> = {};
  if (bytes.length > limits.maxFileBytes) return closed(path, h, "file_too_large", cursor, {});
  let raw: unknown;
  try {
    raw = JSON.parse(new TextDecoder("utf-8", { fatal: true }).decode(bytes));
  } catch {
    // Old CLIs rewrite this file in place with writeFileSync (not atomic): a parse error
    // is usually a write in progress. Keep the last publish; the cursor is not stored,
    // so the next sweep classifies the file as changed and tries again.
    if (input.prior) return { kind: "unchanged" };
    return { kind: "nothing", reason: "legacy_json_unparsable", cursors: {} };
  }
  const e = eventOf(raw, { line: 1, offset: 0 }, skipped);
  const r = fullPass(e === null ? [] : [e], passContext(input, limits), skipped);
  if ("failed" in r) return closed(path, h, r.failed, cursor, r.skipped);
  return { kind: "replace", ...r, cursors: { [path]: cursor }, meta: metaOf(r.state, h, path) };
}

/** A cursor claiming the whole file, minted from line 1 only (no body read). */
async function stubCursor(path: string, epoch: number, limits: GeminiLimits): Promise<FileCursor> {
  const inc = await readIncrement(path, null, {
    maxBytes: 1,
    maxLineBytes: limits.maxHeaderBytes,
    rewriteEpoch: epoch,
    claimWholeFile: true,
  });
  return inc.cursor;
}

/** An empty replace: publishes nothing of a file that blew a bound, counts why. */
function closed(
  path: string,
  h: GeminiHint,
  reason: string,
  cursor: FileCursor,
  skipped: Record<string, number>,
): ExtractOutcome {
  const state: GeminiState = {
    v: 1,
    n: 0,
    tail: [],
    bloom: "",
    ids: 0,
    summary: null,
    first_user: null,
    failed: reason,
  };
  return {
    kind: "replace",
    records: [],
    marks: [],
    cursors: { [path]: cursor },
    state,
    meta: metaOf(state, h, path),
    skipped: { ...skipped, [reason]: (skipped[reason] ?? 0) + 1 },
  };
}

function metaOf(state: GeminiState, h: GeminiHint, path: string): EntryMeta {
  return {
    project: h.project,
    title: state.summary ?? state.first_user,
    parent_session_id: h.parent,
    files: [path],
  };
}
