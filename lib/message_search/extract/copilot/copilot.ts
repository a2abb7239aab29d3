/**
 * The GitHub Copilot CLI extractor (formats-more.md §3): one unit per session
 * (`copilot:<id>`), read from its `events.jsonl` through the framework's entry flow.
 * Discovery is copilot_discover.ts, line rules copilot_events.ts, the fold
 * copilot_pass.ts, rewrite bookkeeping vanish_window.ts.
 *
 * Sweep rules:
 * - unchanged → unchanged; file gone → gone (the flow decides both);
 * - appended → the fold continues from the carried state ("append", orders continue);
 * - rewritten (a /rewind rewrote the file shorter; no marker survives, §3.4), or read
 *   anew while a prior shard exists → full re-read, then reconcile with the window:
 *   exact → an "append" that keeps every indexed record, opens with ONE `record_ids`
 *   mark naming the records that vanished (superseded, still searchable), then the
 *   records new since the cut; restart (cut deeper than the window, edited history) →
 *   generation + 1: every current record re-emitted with `@g<n>` ids behind a
 *   `generation_restore` mark (the Codex policy: nothing lost, older copies superseded);
 * - no prior shard, or a state this parser cannot read → "replace" at generation 0.
 * Bounds: a line over `maxLineBytes` is skipped and counted (`oversized_line`), never
 * buffered; one sweep reads at most `maxSweepBytes` (the cursor stops at a line boundary
 * and the next sweep continues: a huge file is indexed in steps, never dropped).
 * Malformed lines are counted by reason (the shared codes: invalid_utf8, malformed_line,
 * malformed_record, duplicate_uuid, oversized_line); a rewrite re-reads the whole file but
 * reports only skips beyond those already published (the state keeps the running counts).
 * Only file-system failures throw.
 * meta: project = workspace.yaml cwd, else the session.start/context cwd; title =
 * workspace.yaml name/summary, else the first human prompt.
 */
import type { SupersessionMark } from "../../record.ts";
import {
  assertLineLimit,
  type EntryMeta,
  type Extractor,
  type ExtractOutcome,
  type FlowAppendInput,
  flowExtractor,
  type FlowFullInput,
  nextRewriteEpoch,
  readLineBytes,
  type ReadLinesOptions,
  resolveLimits,
  type SourcePlugin,
} from "../framework/plugin.ts";
import { copilotHintOf, discoverCopilot } from "./copilot_discover.ts";
import {
  copilotPass,
  type CopilotPassResult,
  type CopilotState,
  newCopilotState,
  parseCopilotState,
} from "./copilot_pass.ts";
import { reconcile } from "./vanish_window.ts";
import { readWorkspaceYaml } from "./workspace_yaml.ts";

/** Bumped whenever extraction output for the same input changes. */
export const COPILOT_PARSER_VERSION = 1;

/** The registry entry (extract/mod.ts `SOURCE_PLUGINS`): homes are Copilot homes. */
export const COPILOT_PLUGIN: SourcePlugin = {
  source: "copilot",
  parserVersion: COPILOT_PARSER_VERSION,
  build: (r) => createCopilotExtractor({ homes: r.homes }),
};

/** Copilot bounds (see the header). */
export const COPILOT_LIMITS = Object.freeze({
  /** Attachments may embed base64 blobs; 16 MiB leaves room, caps memory. */
  maxLineBytes: 16 << 20,
  /** Bytes read per file per sweep. */
  maxSweepBytes: 256 << 20,
  /** Directory entries visited per discovery. */
  maxWalkEntries: 100_000,
});
export type CopilotLimits = { -readonly [K in keyof typeof COPILOT_LIMITS]: number };

/** Creates the extractor over Copilot homes (each holding `session-state/`). */
export function createCopilotExtractor(
  roots: { homes: string[] },
  options: { limits?: Partial<CopilotLimits> } = {},
): Extractor {
  const limits = resolveLimits<CopilotLimits>("Copilot", COPILOT_LIMITS, options.limits);
  assertLineLimit("Copilot", "maxLineBytes", limits.maxLineBytes);
  const homes = [...roots.homes];
  return flowExtractor<CopilotState>({
    source: "copilot",
    discover: () => discoverCopilot(homes, limits),
    flow: {
      parseState: parseCopilotState,
      append: (i) => appendCopilot(i, limits),
      full: (i) => fullCopilot(i, limits),
    },
  });
}

/** One sweep's read: at most `maxSweepBytes`, the next sweep continues from the cursor. */
function sweepRead(limits: CopilotLimits): ReadLinesOptions {
  return { maxBytes: limits.maxSweepBytes, maxLineBytes: limits.maxLineBytes };
}

/**
 * Adds the oversized lines of the read to the pass's skips (and to the state's running
 * count). With `base` (a rewrite re-read the whole file), only what exceeds the counts
 * already published is reported: the shard's skipped is cumulative.
 */
function settle(
  r: CopilotPassResult,
  oversized: number,
  base: Record<string, number> | null = null,
): Record<string, number> {
  if (oversized > 0) {
    r.skipped.oversized_line = (r.skipped.oversized_line ?? 0) + oversized;
    r.state.skips.oversized_line = (r.state.skips.oversized_line ?? 0) + oversized;
  }
  if (base === null) return r.skipped;
  const out: Record<string, number> = {};
  for (const [k, n] of Object.entries(r.state.skips)) {
    if (n > (base[k] ?? 0)) out[k] = n - (base[k] ?? 0);
  }
  return out;
}

function relOf(i: FlowFullInput): string {
  return copilotHintOf(i.unit)?.rel ?? i.files[0]!.path.split("/").slice(-3).join("/");
}

async function metaOf(i: FlowFullInput, state: CopilotState): Promise<EntryMeta> {
  const ws = await readWorkspaceYaml(copilotHintOf(i.unit)?.workspace ?? null);
  return {
    project: ws.cwd ?? state.cwd,
    title: ws.title ?? state.first_user,
    parent_session_id: null,
    files: [i.files[0]!.path],
  };
}

async function appendCopilot(
  i: FlowAppendInput<CopilotState>,
  limits: CopilotLimits,
): Promise<ExtractOutcome | null> {
  const f = i.files[0];
  if (!f || f.class.kind !== "appended" || f.cursor === null || i.dropped) return null;
  const inc = await readLineBytes(f.path, f.cursor, sweepRead(limits));
  const r = copilotPass(inc.lines, i.state, {
    sessionId: i.unit.sessionId,
    file: relOf(i),
    nextOrder: i.prior.records,
  });
  return {
    kind: "append",
    records: r.records,
    marks: [],
    cursors: { [f.path]: inc.cursor },
    state: r.state,
    meta: await metaOf(i, r.state),
    skipped: settle(r, inc.oversized),
  };
}

async function fullCopilot(i: FlowFullInput, limits: CopilotLimits): Promise<ExtractOutcome> {
  const f = i.files[0];
  if (!f || f.stat === null) return { kind: "gone" };
  const inc = await readLineBytes(f.path, null, {
    ...sweepRead(limits),
    rewriteEpoch: nextRewriteEpoch(f.cursor, { shardExists: i.prior !== null }),
  });
  const lines = inc.lines;
  const ctx = { sessionId: i.unit.sessionId, file: relOf(i) };
  const prior = i.prior ? parseCopilotState(i.prior.state) : null;
  const cursors = { [f.path]: inc.cursor };
  if (i.prior === null || prior === null) {
    const r = copilotPass(lines, newCopilotState(0), { ...ctx, nextOrder: 0 });
    return {
      kind: "replace",
      records: r.records,
      marks: [],
      cursors,
      state: r.state,
      meta: await metaOf(i, r.state),
      skipped: settle(r, inc.oversized),
    };
  }
  const after = i.prior.records;
  const fresh = copilotPass(lines, newCopilotState(prior.generation), { ...ctx, nextOrder: 0 });
  // Only a complete read can prove what vanished; a partial one restarts the generation.
  const rec = inc.complete
    ? reconcile(prior.window, fresh.records)
    : { kind: "restart" as const, reason: "partial_read" };
  if (rec.kind === "exact") {
    const records = fresh.records.slice(rec.keep).map((r, n) => ({ ...r, order: after + n }));
    const marks: SupersessionMark[] = rec.vanished.length > 0
      ? [{ kind: "record_ids", after_order: after, ids: rec.vanished }]
      : [];
    return {
      kind: "append",
      records,
      marks,
      cursors,
      state: fresh.state,
      meta: await metaOf(i, fresh.state),
      skipped: settle(fresh, inc.oversized, prior.skips),
    };
  }
  const generation = prior.generation + 1;
  const r = copilotPass(lines, newCopilotState(generation), { ...ctx, nextOrder: after });
  return {
    kind: "append",
    records: r.records,
    marks: [{ kind: "generation_restore", after_order: after, active_generation: generation }],
    cursors,
    state: r.state,
    meta: await metaOf(i, r.state),
    skipped: settle(r, inc.oversized, prior.skips),
  };
}
