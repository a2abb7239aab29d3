/**
 * The native (Intendant) extractor: one session directory = one unit, read from
 * session.jsonl plus the turns/ sidecars its events reference. Hermetic: it takes the
 * logs directory as a path. Era rules (spec): the epoch marker splits legacy from new;
 * without one, any canonical conversation_message row means the session was born
 * new-era (its info lines are diagnostics, never extracted a second time). A full parse
 * decides the era with a pre-scan; an append continues in the known era, and falls back
 * to a full parse when it brings an epoch marker or the first canonical row. Wrapper
 * sessions (a session_identity with wrapper: true) publish nothing.
 * Every file of a session directory is read through the contained reader with hard links
 * refused (reliability F1): a hard link planted in a session directory may name any file
 * outside it, and neither dev+ino nor the locked profile can tell. A hardlinked
 * session.jsonl is skipped at discovery and a hardlinked session_meta.json or sidecar is
 * left unread, each counted as `hardlinked`.
 */
import { join } from "node:path";
import {
  isLegacyAt,
  type LogEvent,
  LogEventSchema,
  nativeEraOf,
  readMeta,
  SESSION_ID_GRAMMAR,
  SESSION_JSONL,
  type SessionMeta,
} from "../../../session_log/mod.ts";
import { lineText } from "../../../durable/mod.ts";
import { readIncrement, statSource } from "../../cursor.ts";
import type { Increment } from "../../cursor.ts";
import { isSeq, legacyEvent, type NativeState, newEraEvent, newPass } from "./intendant_events.ts";
import {
  countSkip,
  type Discovery,
  type Extractor,
  type ExtractOutcome,
  nextRewriteEpoch,
  type PriorShard,
  runEntryFlow,
  type SessionUnit,
} from "../framework/plugin.ts";

/** Bumped whenever extraction output for the same input changes. */
export const INTENDANT_PARSER_VERSION = 1;

/** Creates the extractor over `<state-root>/logs`. */
export function createIntendantExtractor(roots: { logsDir: string }): Extractor {
  return {
    source: "intendant",
    discover: () => discoverNative(roots.logsDir),
    extract: (unit, prior, ctx) => extractNative(unit, prior, ctx.now),
  };
}

async function discoverNative(logsDir: string): Promise<Discovery> {
  const units: SessionUnit[] = [];
  const skipped: Record<string, number> = {};
  let entries: Deno.DirEntry[] = [];
  try {
    for await (const e of Deno.readDir(logsDir)) entries.push(e);
  } catch (err) {
    if (err instanceof Deno.errors.NotFound) return { units, skipped };
    throw err;
  }
  entries = entries.filter((e) => e.isDirectory && SESSION_ID_GRAMMAR.test(e.name));
  for (const e of entries) {
    const path = join(logsDir, e.name, SESSION_JSONL);
    const st = await statSource(path);
    if (!st) continue;
    if (st.kind !== "file") {
      countSkip(skipped, "not_a_regular_file");
      continue;
    }
    if ((st.nlink ?? 1) > 1) {
      countSkip(skipped, "hardlinked");
      continue;
    }
    units.push({
      source: "intendant",
      sessionId: e.name,
      key: `intendant:${e.name}`,
      files: [{ path, role: "main" }],
      hint: { dir: join(logsDir, e.name) },
    });
  }
  return { units, skipped };
}

interface ParsedLine {
  line: number;
  ev: LogEvent;
}

function parseLines(inc: Increment, skipped: Record<string, number>): ParsedLine[] {
  const out: ParsedLine[] = [];
  for (const span of inc.lines) {
    if (span.end === span.start) continue;
    const text = lineText(inc.bytes, span, inc.baseOffset);
    let raw: unknown;
    try {
      raw = JSON.parse(text);
    } catch {
      // Malformed lines are data: counted, never fatal.
      countSkip(skipped, "malformed_line");
      continue;
    }
    const r = LogEventSchema.safeParse(raw);
    if (r.success) out.push({ line: span.lineNo, ev: r.data });
    else countSkip(skipped, "malformed_line");
  }
  if (inc.oversizedLines.length) countSkip(skipped, "oversized_line", inc.oversizedLines.length);
  return out;
}

async function extractNative(
  unit: SessionUnit,
  prior: PriorShard | null,
  now: number,
): Promise<ExtractOutcome> {
  const file = unit.files[0]!;
  const dir = (unit.hint?.dir as string | undefined) ?? join(file.path, "..");
  // Read once per extraction, only past the gone/unchanged decision.
  let metaRead: Promise<MetaRead> | null = null;
  const metaOnce = () => metaRead ??= readMetaOnce(dir);
  return await runEntryFlow<NativeState>(unit, prior, {
    now,
    flow: {
      // A hardlink into a session directory may name any file (cursor.ts header).
      hardlinks: "refuse",
      parseState: (raw) => (raw as NativeState | undefined)?.v === 1 ? raw as NativeState : null,
      append: async ({ files, prior, state }) => {
        const f = files[0]!;
        if (f.class.kind !== "appended" || !f.cursor) return null;
        const { meta } = await metaOnce();
        // A CursorMismatchError (rewritten meanwhile) makes the flow re-read from scratch.
        const inc = await readIncrement(f.path, f.cursor, { hardlinks: "refuse" });
        return appendNative(unit, dir, meta, f.path, prior, state, inc);
      },
      full: async ({ files }) => {
        const { meta, skips } = await metaOnce();
        const epoch = nextRewriteEpoch(files[0]!.cursor);
        return withSkips(await fullParse(unit, dir, meta, file.path, epoch), skips);
      },
    },
  });
}

interface MetaRead {
  meta: SessionMeta | null;
  skips: Record<string, number>;
}

async function readMetaOnce(dir: string): Promise<MetaRead> {
  const m = await readMeta(dir);
  // Counted with the shard's other skips (the meta is left unread, the session indexes),
  // once per full parse: an append adds to the shard's counts, and the meta is re-read by
  // every extraction.
  const skips: Record<string, number> = !m.ok && m.reason === "hardlinked" ? { hardlinked: 1 } : {};
  return { meta: m.ok ? m.meta : null, skips };
}

function withSkips(out: ExtractOutcome, extra: Record<string, number>): ExtractOutcome {
  if (out.kind !== "replace" && out.kind !== "append") return out;
  mergeSkips(out.skipped, extra);
  return out;
}

/** Continues in the known era; null when the increment needs a full parse instead. */
function appendNative(
  unit: SessionUnit,
  dir: string,
  meta: SessionMeta | null,
  path: string,
  prior: PriorShard,
  priorState: NativeState,
  inc: Increment,
): ExtractOutcome | null {
  const skipped: Record<string, number> = {};
  const lines = parseLines(inc, skipped);
  // An epoch marker, a first canonical row in a legacy file, or a wrapper identity changes
  // how EARLIER lines are read: only a full parse can honour that.
  const needsFull = lines.some(({ ev }) =>
    ev.event === "conversation_message_epoch" ||
    (priorState.era === "legacy" && ev.event === "conversation_message") ||
    (ev.event === "session_identity" && (ev.data as { wrapper?: unknown })?.wrapper === true)
  );
  if (needsFull) return null;
  const pass = newPass({
    dir,
    sessionId: unit.sessionId,
    metaTask: meta?.task ?? null,
    state: structuredClone(priorState),
    nextOrder: prior.records,
  });
  for (const { line, ev } of lines) {
    (pass.state.era === "new" ? newEraEvent : legacyEvent)(pass, ev, line);
  }
  mergeSkips(pass.skipped, skipped);
  return {
    kind: "append",
    records: pass.records,
    marks: pass.marks,
    cursors: { [path]: inc.cursor },
    state: pass.state,
    meta: entryMeta(meta, pass.state, path),
    skipped: pass.skipped,
  };
}

async function fullParse(
  unit: SessionUnit,
  dir: string,
  meta: SessionMeta | null,
  path: string,
  rewriteEpoch: number,
): Promise<ExtractOutcome> {
  const inc = await readIncrement(path, null, { rewriteEpoch, hardlinks: "refuse" });
  const skipped: Record<string, number> = {};
  const lines = parseLines(inc, skipped);
  if (
    lines.some(({ ev }) =>
      ev.event === "session_identity" && (ev.data as { wrapper?: unknown })?.wrapper === true
    )
  ) {
    return { kind: "nothing", reason: "wrapper_session", cursors: { [path]: inc.cursor } };
  }
  const era = nativeEraOf(lines.map(({ ev }) => ({ event: ev })));
  const { epochAt, canonical } = era;
  const mapping = epochAt >= 0 ? epochMapping(lines[epochAt]!.ev.data, skipped) : [];
  const state: NativeState = {
    v: 1,
    era: epochAt >= 0 || canonical ? "new" : "legacy",
    created_at_ms: meta?.created_at_ms ?? 0,
    infer: null,
    steers: {},
    started_seen: 0,
    parent: null,
  };
  const pass = newPass({
    dir,
    sessionId: unit.sessionId,
    metaTask: meta?.task ?? null,
    state,
    nextOrder: 0,
    mapping: [...mapping],
  });
  lines.forEach(({ line, ev }, i) => {
    const legacySegment = isLegacyAt(era, i);
    if (legacySegment) legacyEvent(pass, ev, line);
    else newEraEvent(pass, ev, line);
  });
  mergeSkips(pass.skipped, skipped);
  return {
    kind: "replace",
    records: pass.records,
    marks: pass.marks,
    cursors: { [path]: inc.cursor },
    state: pass.state,
    meta: entryMeta(meta, pass.state, path),
    skipped: pass.skipped,
  };
}

/**
 * The epoch marker's [seq, role, hash16] entries that can become record seqs; a malformed
 * entry is counted and dropped (its seq would fail the record schema and sink the shard).
 */
function epochMapping(data: unknown, skipped: Record<string, number>): [number, string, string][] {
  const raw = (data as { mapping?: unknown } | null)?.mapping;
  if (!Array.isArray(raw)) return [];
  const out: [number, string, string][] = [];
  for (const m of raw) {
    if (Array.isArray(m) && isSeq(m[0]) && typeof m[1] === "string" && typeof m[2] === "string") {
      out.push([m[0], m[1], m[2]]);
    } else countSkip(skipped, "bad_epoch_mapping");
  }
  return out;
}

function entryMeta(meta: SessionMeta | null, state: NativeState, path: string) {
  return {
    project: meta?.project_root ?? null,
    title: meta?.name ?? meta?.task ?? null,
    parent_session_id: state.parent,
    files: [path],
  };
}

function mergeSkips(into: Record<string, number>, from: Record<string, number>): void {
  for (const [k, n] of Object.entries(from)) countSkip(into, k, n);
}
