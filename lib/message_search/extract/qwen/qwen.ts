/**
 * The Qwen Code extractor: one `<sessionId>.jsonl` = one unit (`qwen:<sessionId>`), run
 * through the framework's entry flow. Hermetic: it takes runtime bases as paths (the
 * wiring resolves `$QWEN_RUNTIME_DIR`, `$QWEN_HOME`, `~/.qwen`). Discovery is
 * qwen_discover.ts, line shapes and prose qwen_lines.ts, the tree qwen_tree.ts, bounds
 * qwen_limits.ts.
 *
 * Sweep rules: appended with a usable state → `appendPass` over the new complete lines
 * when the chain only grows (equals a full pass); otherwise a full pass ("replace",
 * rewrite epoch bumped). A torn last line is never read; it waits for the next sweep.
 * Bounds (fail-closed, never a partial publish): a file over `maxFileBytes` or with more
 * than `maxRecords` uuids publishes the unit EMPTY with the reason counted and kept in
 * `state.failed`; a line over `maxLineBytes` is skipped and counted (`oversized_line`),
 * the rest of the file is still read.
 * meta: project = the first record's `cwd`; title = the last `custom_title`, else the
 * first main-chain user prose; parent_session_id = a `parent_session` record's parent, or
 * the `forkedFrom.sessionId` of a `/branch` copy.
 */
import { readIncrement } from "../../cursor.ts";
import type { FileCursor } from "../../cursor_types.ts";
import {
  type EntryMeta,
  type Extractor,
  type ExtractOutcome,
  type FlowAppendInput,
  flowExtractor,
  type FlowFullInput,
  nextRewriteEpoch,
  readLines,
  type SessionUnit,
} from "../framework/plugin.ts";
import { discoverQwen } from "./qwen_discover.ts";
import { type QwenLimits, resolveQwenLimits } from "./qwen_limits.ts";
import {
  appendPass,
  fullPass,
  isQwenState,
  type QwenPassContext,
  type QwenState,
} from "./qwen_tree.ts";

/** Bumped whenever extraction output for the same input changes. */
export const QWEN_PARSER_VERSION = 1;

export { QWEN_LIMITS, type QwenLimits } from "./qwen_limits.ts";

/** Options for {@link createQwenExtractor}. */
export interface QwenExtractorOptions {
  /** Overrides of {@link QWEN_LIMITS} (tests shrink them). */
  limits?: Partial<QwenLimits>;
}

/** Creates the extractor over Qwen runtime bases (each holding `projects/`). */
export function createQwenExtractor(
  roots: { runtimeDirs: string[] },
  options: QwenExtractorOptions = {},
): Extractor {
  const limits = resolveQwenLimits(options.limits);
  const bases = [...roots.runtimeDirs];
  return flowExtractor<QwenState>({
    source: "qwen",
    discover: () => discoverQwen(bases, limits),
    flow: {
      parseState: (raw) => (isQwenState(raw) ? raw : null),
      append: (input) => appendQwen(input, limits),
      full: (input) => fullQwen(input, limits),
    },
  });
}

function relOf(unit: SessionUnit): string {
  const rel = unit.hint?.rel;
  return typeof rel === "string" ? rel : unit.files[0]!.path.split("/").slice(-4).join("/");
}

function passContext(unit: SessionUnit, limits: QwenLimits): QwenPassContext {
  return { sessionId: unit.sessionId, file: relOf(unit), maxNodes: limits.maxRecords };
}

function readOptions(limits: QwenLimits) {
  // One byte past the file bound: a file that grew past it is seen, not silently cut.
  return { maxBytes: limits.maxFileBytes + 1, maxLineBytes: limits.maxLineBytes };
}

async function appendQwen(
  input: FlowAppendInput<QwenState>,
  limits: QwenLimits,
): Promise<ExtractOutcome | null> {
  const f = input.files[0];
  if (!f || f.class.kind !== "appended" || f.cursor === null || input.state.failed !== null) {
    return null;
  }
  const read = await readLines(f.path, f.cursor, readOptions(limits));
  if (read.cursor.size > limits.maxFileBytes) return null;
  const skipped: Record<string, number> = {};
  if (read.oversized > 0) skipped.oversized_line = read.oversized;
  const r = appendPass(
    read.lines,
    input.state,
    input.prior.records,
    passContext(input.unit, limits),
    skipped,
  );
  if (r === null) return null;
  return {
    kind: "append",
    ...r,
    cursors: { [f.path]: read.cursor },
    meta: metaOf(r.state, f.path),
  };
}

async function fullQwen(input: FlowFullInput, limits: QwenLimits): Promise<ExtractOutcome> {
  const f = input.files[0];
  if (!f || f.stat === null) return { kind: "gone" };
  const epoch = nextRewriteEpoch(f.cursor);
  if (f.stat.size > limits.maxFileBytes) {
    const inc = await readIncrement(f.path, null, {
      maxBytes: 1,
      maxLineBytes: 64 << 10,
      rewriteEpoch: epoch,
      claimWholeFile: true,
    });
    return closed(f.path, "file_too_large", inc.cursor, {});
  }
  const read = await readLines(f.path, null, { ...readOptions(limits), rewriteEpoch: epoch });
  const skipped: Record<string, number> = {};
  if (read.oversized > 0) skipped.oversized_line = read.oversized;
  if (read.cursor.size > limits.maxFileBytes) {
    return closed(f.path, "file_too_large", read.cursor, skipped);
  }
  const r = fullPass(read.lines, passContext(input.unit, limits), skipped);
  if ("failed" in r) return closed(f.path, r.failed, read.cursor, r.skipped);
  return {
    kind: "replace",
    ...r,
    cursors: { [f.path]: read.cursor },
    meta: metaOf(r.state, f.path),
  };
}

/** An empty replace: publishes nothing of a file that blew a bound, counts why. */
function closed(
  path: string,
  reason: string,
  cursor: FileCursor,
  skipped: Record<string, number>,
): ExtractOutcome {
  const state: QwenState = {
    v: 1,
    leaf: null,
    head: null,
    linear: true,
    side: null,
    nodes: 0,
    cwd: null,
    title: null,
    first_user: null,
    parent: null,
    failed: reason,
  };
  return {
    kind: "replace",
    records: [],
    marks: [],
    cursors: { [path]: cursor },
    state,
    meta: metaOf(state, path),
    skipped: { ...skipped, [reason]: (skipped[reason] ?? 0) + 1 },
  };
}

function metaOf(state: QwenState, path: string): EntryMeta {
  return {
    project: state.cwd,
    title: state.title ?? state.first_user,
    parent_session_id: state.parent,
    files: [path],
  };
}
