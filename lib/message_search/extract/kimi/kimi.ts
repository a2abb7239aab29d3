/**
 * The Kimi Code extractor (formats.md §3; kimi-code layout only, not the legacy Python
 * kimi-cli). One unit = one session directory: every agent wire is a cursor-tracked file
 * (role `agent:<id>`, main first); state.json gives the metadata and is read, not tracked.
 * Main and sub-agent prose publish under the session id (`kimi:<sessionId>`); sub-agent
 * records carry `subagent: true`. Rules for lines live in kimi_wire.ts, ids, order and
 * undo marks in kimi_pass.ts, bounds in kimi_limits.ts, discovery in kimi_discover.ts.
 *
 * Incremental, through the shared entry flow (framework/entry_flow.ts: classify,
 * gone/unchanged, then the `append` and `full` hooks below): `state` is {v, blocked,
 * title, times} (times = last effective time per agent, at most one entry per wire, so it
 * stays bounded). Appended plain lines continue from the saved cursors. An increment
 * holding a `context.undo` falls back to a full re-parse ("replace"), because the undo
 * walk needs the agent's whole in-context history, which is not worth persisting for a
 * rare command. A rewritten or vanished wire also re-parses from scratch, with each
 * file's rewrite_epoch bumped (framework `nextRewriteEpoch`).
 *
 * Fail-closed: when a bound breaks (see kimi_limits.ts) the WHOLE session publishes
 * nothing: a replace with no records retracts what an earlier sweep published, the reason
 * is counted once, and the wires get stub cursors (one line read) so an idle blocked
 * session costs a stat per sweep. Wire-size reasons are permanent for append-only files;
 * only a rewrite re-opens the session. An oversized state.json is re-checked on change.
 * Errors: malformed input is counted, never thrown; a wire that vanishes mid-read is gone;
 * one rewritten while the full parse streams it is re-read once by the flow.
 */
import { join, relative } from "node:path";
import { CursorMismatchError } from "../../cursor.ts";
import type { FileCursor } from "../../cursor_types.ts";
import {
  type EntryFlow,
  type Extractor,
  type ExtractOutcome,
  type FlowFullInput,
  nextRewriteEpoch,
  runEntryFlow,
  type SessionUnit,
} from "../framework/plugin.ts";
import { discoverKimi, type KimiUnitHint, ROOT_WIRE_AGENT } from "./kimi_discover.ts";
import { type KimiBlockReason, type KimiLimits, resolveKimiLimits } from "./kimi_limits.ts";
import { type AgentOps, runKimiPass } from "./kimi_pass.ts";
import { type KimiSessionMeta, readSessionState, readWire, type WireRead } from "./kimi_read.ts";
import { blockedOutcome } from "./kimi_blocked.ts";
import {
  cutTitle,
  entryMeta,
  type KimiCall,
  type KimiFile,
  type KimiState,
  parseKimiState,
} from "./kimi_state.ts";

export * from "./kimi_limits.ts";
export type { KimiState } from "./kimi_state.ts";

/** Bumped whenever extraction output for the same input changes. */
export const KIMI_PARSER_VERSION = 1;

/** Options for {@link createKimiExtractor}. */
export interface KimiExtractorOptions {
  /** Bounds; every field defaults to the spec value. */
  limits?: Partial<KimiLimits>;
}

/** Creates the extractor over Kimi Code homes (each holds sessions/ and session_index.jsonl). */
export function createKimiExtractor(
  roots: { homes: string[] },
  options: KimiExtractorOptions = {},
): Extractor {
  const limits = resolveKimiLimits(options.limits);
  // A home listed twice (a leased home equal to the default) is walked once.
  const homes = [...new Set(roots.homes)];
  return {
    source: "kimi",
    discover: () => discoverKimi(homes, limits),
    extract: async (unit, prior, ctx) => {
      // The hint is checked before any file is touched: a unit without it is a bug.
      const flow = kimiFlow(hintOf(unit), limits);
      return await runEntryFlow(unit, prior, { now: ctx.now, flow });
    },
  };
}

/**
 * Kimi's hooks into the shared entry flow: `append` continues a publishing session whose
 * wires only grew; a blocked session, and a wire set that cannot be continued, go to
 * `full`, which applies the blocked rules (kimi_blocked.ts: a still-blocked session's
 * stubs move on without a recount) and otherwise parses every wire from scratch.
 */
function kimiFlow(hint: KimiUnitHint, limits: KimiLimits): EntryFlow<KimiState> {
  return {
    parseState: parseKimiState,
    append: (i) => appendKimi(callOf(i, i.state, hint, limits), i.state),
    full: (i) => fullKimi(callOf(i, i.prior ? parseKimiState(i.prior.state) : null, hint, limits)),
  };
}

function callOf(
  i: FlowFullInput,
  state: KimiState | null,
  hint: KimiUnitHint,
  limits: KimiLimits,
): KimiCall {
  const files: KimiFile[] = i.files.map((f) => ({
    ...f,
    agent: f.role.startsWith("agent:") ? f.role.slice(6) : f.role,
    rel: relative(hint.home, f.path),
  }));
  return {
    unit: i.unit,
    hint,
    files,
    prior: i.prior,
    state,
    limits,
    // `dropped` also covers a wire of the unit that is gone, which the class check
    // excludes anyway.
    continuable: state !== null && !i.dropped &&
      files.every((f) => f.class.kind !== "rewritten" && f.class.kind !== "gone"),
  };
}

/** A publishing session whose wires only grew: continue from the saved cursors. */
async function appendKimi(call: KimiCall, state: KimiState): Promise<ExtractOutcome | null> {
  if (call.hint.blocked || state.blocked || !call.continuable) return null;
  const skipped: Record<string, number> = {};
  const path = join(call.hint.dir, "state.json");
  const sess = await readSessionState(path, call.limits.maxStateBytes, skipped);
  if (sess.oversized) return await blockedOutcome(call, "oversized_state_json", null, skipped);
  // null (an undo, a wire rewritten mid-read): `full` re-reads state.json and every wire.
  return await tryAppend(call, state, sess.meta);
}

/** Blocked sessions (see kimi_blocked.ts), else a parse of every wire from scratch. */
async function fullKimi(call: KimiCall): Promise<ExtractOutcome> {
  const { hint, state } = call;
  if (hint.blocked) return await blockedOutcome(call, hint.blocked, null, {});
  if (call.continuable && state?.blocked && state.blocked !== "oversized_state_json") {
    return await blockedOutcome(call, state.blocked as KimiBlockReason, null, {});
  }
  const skipped: Record<string, number> = {};
  const sess = await readSessionState(
    join(hint.dir, "state.json"),
    call.limits.maxStateBytes,
    skipped,
  );
  if (sess.oversized) return await blockedOutcome(call, "oversized_state_json", null, skipped);
  return await fullParse(call, sess.meta, skipped);
}

/** Continues from the saved cursors; null when only a full parse can be right. */
async function tryAppend(
  call: KimiCall,
  state: KimiState,
  meta: KimiSessionMeta,
): Promise<ExtractOutcome | null> {
  const skipped: Record<string, number> = {};
  const cursors: Record<string, FileCursor> = {};
  const reads: { file: KimiFile; read: WireRead }[] = [];
  for (const file of call.files) {
    const old = file.cursor;
    if (file.class.kind === "unchanged" && old) {
      cursors[file.path] = old;
      continue;
    }
    let read: WireRead;
    try {
      read = await readWire(file.path, file.class.kind === "appended" ? old : null, {
        maxRecordBytes: call.limits.maxRecordBytes,
        seedTime: state.times[file.agent] ?? meta.createdAtMs ?? 0,
        skipped,
      });
    } catch (err) {
      // Rewritten or removed between classification and reading: re-read from scratch.
      if (err instanceof CursorMismatchError || err instanceof Deno.errors.NotFound) return null;
      throw err;
    }
    // The undo walk needs the agent's whole history: re-parse instead (undo is rare).
    if (read.hasUndo) return null;
    if (read.oversized > 0) return await blockedOutcome(call, "oversized_record", meta, skipped);
    cursors[file.path] = read.cursor;
    reads.push({ file, read });
  }
  const bound = sessionBound(Object.values(cursors), call.limits);
  if (bound) return await blockedOutcome(call, bound, meta, skipped);
  const pass = runKimiPass(reads.map(({ file, read }) => agentOps(file, read)), {
    sessionId: call.unit.sessionId,
    nextOrder: call.prior!.records,
  });
  const times = { ...state.times };
  for (const { file, read } of reads) times[file.agent] = read.lastTime;
  const next: KimiState = {
    v: 1,
    blocked: null,
    title: state.title ?? cutTitle(pass.firstUser),
    times,
  };
  return {
    kind: "append",
    records: pass.records,
    marks: pass.marks,
    cursors,
    state: next,
    meta: entryMeta(call, meta, next),
    skipped,
  };
}

async function fullParse(
  call: KimiCall,
  meta: KimiSessionMeta,
  skipped: Record<string, number>,
): Promise<ExtractOutcome> {
  const present = call.files.filter((f) => f.stat?.kind === "file");
  // Sizes first: an oversized wire is refused before a byte of it is read.
  const sizes = present.map((f) => f.stat!.size);
  if (sizes.some((s) => s > call.limits.maxWireBytes)) {
    return await blockedOutcome(call, "oversized_wire", meta, skipped);
  }
  if (sizes.reduce((a, b) => a + b, 0) > call.limits.maxSessionBytes) {
    return await blockedOutcome(call, "oversized_session", meta, skipped);
  }
  const cursors: Record<string, FileCursor> = {};
  const reads: { file: KimiFile; read: WireRead }[] = [];
  for (const file of present) {
    let read: WireRead;
    try {
      read = await readWire(file.path, null, {
        maxRecordBytes: call.limits.maxRecordBytes,
        seedTime: meta.createdAtMs ?? 0,
        rewriteEpoch: nextRewriteEpoch(file.cursor),
        skipped,
      });
    } catch (err) {
      // Removed since classification: the file is gone for this parse.
      if (err instanceof Deno.errors.NotFound) continue;
      throw err;
    }
    if (read.oversized > 0) return await blockedOutcome(call, "oversized_record", meta, skipped);
    cursors[file.path] = read.cursor;
    reads.push({ file, read });
  }
  if (reads.length === 0) return { kind: "gone" };
  const bound = sessionBound(Object.values(cursors), call.limits);
  if (bound) return await blockedOutcome(call, bound, meta, skipped);
  const pass = runKimiPass(reads.map(({ file, read }) => agentOps(file, read)), {
    sessionId: call.unit.sessionId,
    nextOrder: 0,
  });
  const times: Record<string, number> = {};
  for (const { file, read } of reads) times[file.agent] = read.lastTime;
  const state: KimiState = { v: 1, blocked: null, title: cutTitle(pass.firstUser), times };
  return {
    kind: "replace",
    records: pass.records,
    marks: pass.marks,
    cursors,
    state,
    meta: entryMeta(call, meta, state),
    skipped,
  };
}

/** The session-wide bound the read cursors break, if any (sizes are fstat sizes at read). */
function sessionBound(cursors: FileCursor[], limits: KimiLimits): KimiBlockReason | null {
  if (cursors.some((c) => c.size > limits.maxWireBytes)) return "oversized_wire";
  if (cursors.reduce((n, c) => n + c.size, 0) > limits.maxSessionBytes) return "oversized_session";
  const lines = cursors.reduce((n, c) => n + c.next_line - 1, 0);
  return lines > limits.maxSessionRecords ? "too_many_wire_records" : null;
}

function agentOps(file: KimiFile, read: WireRead): AgentOps {
  const subagent = file.agent !== "main" && file.agent !== ROOT_WIRE_AGENT;
  return { agent: file.agent, subagent, rel: file.rel, ops: read.ops };
}

function hintOf(unit: SessionUnit): KimiUnitHint {
  const h = unit.hint ?? {};
  if (typeof h.home !== "string" || typeof h.dir !== "string") {
    throw new TypeError(`Kimi unit "${unit.key}" lacks its discovery hint`);
  }
  return { home: h.home, dir: h.dir, blocked: (h.blocked as KimiBlockReason | null) ?? null };
}
