/**
 * Private to store/: applies one ShardUpdate to a publish draft (the manifest being
 * built under the lock). Returns null when accepted, else the rejection reason:
 *  - "tombstoned"       the key was deliberately deleted (sticky until the window expires);
 *  - "base_moved"       append/touch/gone whose base differs from the entry's generations;
 *  - "stale_watermark"  replace with a lower watermark over the same fingerprint and the
 *                       same cursor paths: a writer that lost a race;
 *  - "invalid"          the segment or the resulting entry fails the schema (an extractor
 *                       bug; writing it would poison every later read);
 *  - "corrupt_base"     compaction found a base generation missing or corrupt; the entry
 *                       is quarantined (types.ts) so the next sweep re-derives it with a
 *                       replace, and readers meanwhile report it instead of missing it.
 * A "quarantine" update (a damaged generation found by a reader or the startup check) is
 * accepted only over the exact generations list it names, like append/touch/gone, and is
 * a no-op on an entry already quarantined.
 * Ordering: a new generation is written (durably) before the draft references it, so the
 * manifest written afterwards never names a missing file.
 */
import type { Fs } from "../../durable/mod.ts";
import { NotFoundError } from "../../errors.ts";
import { type MessageRecord, SOURCES } from "../record.ts";
import { join } from "node:path";
import { CorruptGenerationError, encodeSegment, loadSegment, writeSegment } from "./segments.ts";
import { isExactSegment } from "./segment_check.ts";
import {
  type Manifest,
  type ManifestEntry,
  ManifestEntrySchema,
  SEGMENT_SCHEMA,
  type ShardSegment,
  ShardSegmentSchema,
  type ShardUpdate,
} from "./types.ts";

/** More segments than this after an append trigger a merge (bounds read cost). */
export const COMPACT_MAX_SEGMENTS = 16;
/**
 * Size-tiered compaction: the merge starts at the oldest segment whose bytes are at most
 * this fraction of everything newer (the new tail included). Equal-sized segments (a
 * shard built by small appends) still merge into ONE; a large head is rewritten only once
 * the tail has grown to twice its size, so appending to a long session costs a few times
 * the appended bytes instead of the whole shard every 16 appends.
 */
const COMPACT_TAIL_RATIO = 0.5;

const KINDS = new Set(["replace", "append", "touch", "gone", "quarantine"]);

/** The manifest under construction by one publish. */
export interface PublishDraft {
  sessions: Manifest["sessions"];
  tombstones: Manifest["tombstones"];
  /** True once anything was accepted or dropped (the manifest must be written). */
  changed: boolean;
}

/** What applyUpdate needs from the store. */
export interface ApplyContext {
  fs: Fs;
  genDir: string;
  pv: number;
  nowMs: number;
  now: () => number;
}

/** Throws TypeError for an update no caller should be able to build. */
export function assertUpdateShape(u: ShardUpdate): void {
  if (!u || typeof u !== "object") throw new TypeError("A shard update must be an object");
  if (!KINDS.has(u.kind)) throw new TypeError(`Unknown update kind "${u.kind}" for "${u.key}"`);
  if (!(SOURCES as readonly string[]).includes(u.source)) {
    throw new TypeError(`Unknown source "${u.source}" for "${u.key}"`);
  }
  const expected = `${u.source}:${u.session_id}`;
  if (u.key !== expected) {
    throw new TypeError(`Update key "${u.key}" does not match its source and id: "${expected}"`);
  }
  if (u.base !== null && !Array.isArray(u.base)) {
    throw new TypeError(`Update base for "${u.key}" must be null or a list of generations`);
  }
  if ((u.kind === "replace" || u.kind === "append") && !u.segment) {
    throw new TypeError(`A "${u.kind}" update for "${u.key}" needs a segment`);
  }
}

/** Applies `u` to `d`; null when accepted, else the rejection reason. */
export async function applyUpdate(
  d: PublishDraft,
  u: ShardUpdate,
  ctx: ApplyContext,
): Promise<string | null> {
  if (Object.hasOwn(d.tombstones, u.key)) return "tombstoned";
  const old = Object.hasOwn(d.sessions, u.key) ? d.sessions[u.key] : undefined;
  if (u.kind !== "replace") {
    if (!old || !sameList(old.generations, u.base)) return "base_moved";
  } else if (old && isStaleReplace(old, u)) {
    return "stale_watermark";
  }
  if (u.kind === "quarantine") {
    if (old!.quarantined_at_ms !== undefined) return null;
    d.sessions[u.key] = quarantinedEntry(old!, ctx.nowMs);
    d.changed = true;
    return null;
  }
  let segment: ShardSegment | null = null;
  if ((u.kind === "replace" || u.kind === "append") && u.segment) {
    const candidate = {
      schema: SEGMENT_SCHEMA,
      parser_version: ctx.pv,
      key: u.key,
      records: u.segment.records,
      marks: u.segment.marks,
    };
    // The non-copying check first: zod would copy every record of a backfill (segment_check.ts).
    if (isExactSegment(candidate)) {
      const marks = ShardSegmentSchema.shape.marks.safeParse(candidate.marks);
      if (!marks.success) return "invalid";
      segment = { ...candidate, schema: SEGMENT_SCHEMA, marks: marks.data };
    } else {
      const parsed = ShardSegmentSchema.safeParse(candidate);
      if (!parsed.success) return "invalid";
      segment = parsed.data;
    }
  }
  // An empty append carries no data: no generation, same as a touch.
  if (u.kind === "append" && segment && isEmpty(segment)) segment = null;
  const checked = ManifestEntrySchema.safeParse(buildEntry(u, old, ctx.nowMs));
  if (!checked.success) return "invalid";
  const entry = checked.data;
  if (u.kind === "replace") {
    const seg = segment!;
    entry.generations = [await writeSegment(ctx.genDir, seg, ctx)];
    setStats(entry, tsRange(seg.records), seg.records.length);
  } else if (u.kind === "append" && segment) {
    const prev = old!;
    if (prev.generations.length + 1 > COMPACT_MAX_SEGMENTS) {
      const from = await mergeStart(prev.generations, segment, ctx);
      const merged = await mergeSegments(prev.generations.slice(from), segment, ctx);
      if (merged === null) {
        d.sessions[u.key] = quarantinedEntry(prev, ctx.nowMs);
        d.changed = true;
        return "corrupt_base";
      }
      const name = await writeSegment(ctx.genDir, merged, ctx);
      entry.generations = [...prev.generations.slice(0, from), name];
      const range = combine(prev.records > 0 ? prev : null, tsRange(segment.records));
      setStats(entry, range, prev.records + segment.records.length);
    } else {
      entry.generations = [...prev.generations, await writeSegment(ctx.genDir, segment, ctx)];
      const range = combine(prev.records > 0 ? prev : null, tsRange(segment.records));
      setStats(entry, range, prev.records + segment.records.length);
    }
  }
  d.sessions[u.key] = entry;
  d.changed = true;
  return null;
}

/**
 * `old` quarantined at `nowMs` (types.ts): no generations (they are retired, GC removes
 * them after the grace), no cursors, state, watermark or fingerprint — so the next sweep
 * reads the sources from the start and its replace passes the stale-watermark gate — and
 * no records; source, meta, skips, source_gone and the ts range stay.
 */
export function quarantinedEntry(old: ManifestEntry, nowMs: number): ManifestEntry {
  return {
    ...old,
    generations: [],
    records: 0,
    cursors: {},
    state: null,
    source_watermark: 0,
    source_fingerprint: "",
    published_at_ms: nowMs,
    quarantined_at_ms: nowMs,
  };
}

/**
 * The entry minus its new generation; append/touch/gone inherit what the update omits,
 * the quarantine included (only a replace re-derives the whole shard and ends it).
 */
function buildEntry(u: ShardUpdate, old: ManifestEntry | undefined, nowMs: number): ManifestEntry {
  const inherit = u.kind === "replace" ? undefined : old;
  const quarantined = inherit?.quarantined_at_ms;
  return {
    source: u.source,
    session_id: u.session_id,
    generations: inherit?.generations ?? [],
    records: inherit?.records ?? 0,
    newest_ts_ms: inherit?.newest_ts_ms ?? 0,
    oldest_ts_ms: inherit?.oldest_ts_ms ?? 0,
    source_watermark: u.source_watermark ?? inherit?.source_watermark ?? 0,
    source_fingerprint: u.source_fingerprint ?? inherit?.source_fingerprint ?? "",
    cursors: u.cursors ?? inherit?.cursors ?? {},
    state: u.state !== undefined ? u.state : inherit?.state ?? null,
    source_gone: u.kind === "gone",
    meta: u.meta ?? inherit?.meta ??
      { project: null, title: null, parent_session_id: null, files: [] },
    skipped: u.kind === "replace" ? { ...u.skipped } : sumSkipped(inherit?.skipped, u.skipped),
    published_at_ms: nowMs,
    ...(quarantined === undefined ? {} : { quarantined_at_ms: quarantined }),
  };
}

/** A lower watermark is stale only over the same fingerprint AND the same cursor paths. */
function isStaleReplace(old: ManifestEntry, u: ShardUpdate): boolean {
  if ((u.source_watermark ?? 0) >= old.source_watermark) return false;
  if ((u.source_fingerprint ?? "") !== old.source_fingerprint) return false;
  const a = Object.keys(u.cursors ?? {}).sort();
  const b = Object.keys(old.cursors).sort();
  return sameList(a, b);
}

/**
 * Index of the first generation to merge: the oldest one no larger than
 * COMPACT_TAIL_RATIO × the bytes after it. Sizes come from a stat of each file; a
 * generation that cannot be stat'ed starts the merge at 0, whose load then reports it.
 */
async function mergeStart(gens: string[], tail: ShardSegment, ctx: ApplyContext) {
  const sizes: number[] = [];
  for (const g of gens) {
    try {
      sizes.push((await ctx.fs.stat(join(ctx.genDir, g))).size);
    } catch (err) {
      if (err instanceof Deno.errors.NotFound) return 0;
      throw err;
    }
  }
  let after = encodeSegment(tail).length;
  let from = gens.length;
  for (let i = gens.length - 1; i >= 0; i--) {
    after += sizes[i]!;
    if (sizes[i]! <= COMPACT_TAIL_RATIO * (after - sizes[i]!)) from = i;
  }
  return Math.min(from, gens.length - 1);
}

/** Loads the base segments `gens` and appends `tail`; null when one is missing or corrupt. */
async function mergeSegments(
  gens: string[],
  tail: ShardSegment,
  ctx: ApplyContext,
): Promise<ShardSegment | null> {
  const records: ShardSegment["records"] = [];
  const marks: ShardSegment["marks"] = [];
  const parts: ShardSegment[] = [];
  for (const g of gens) {
    try {
      parts.push(await loadSegment(ctx.fs, ctx.genDir, g));
    } catch (err) {
      if (err instanceof CorruptGenerationError || err instanceof NotFoundError) return null;
      throw err;
    }
  }
  parts.push(tail);
  // Loops, not push(...xs): a spread of 100k+ records overflows the call stack.
  for (const p of parts) {
    for (const r of p.records) records.push(r);
    for (const m of p.marks) marks.push(m);
  }
  return { ...tail, records, marks };
}

type Range = { newest_ts_ms: number; oldest_ts_ms: number } | null;

function tsRange(records: readonly MessageRecord[]): Range {
  if (records.length === 0) return null;
  let newest = -Infinity;
  let oldest = Infinity;
  for (const r of records) {
    if (r.ts_ms > newest) newest = r.ts_ms;
    if (r.ts_ms < oldest) oldest = r.ts_ms;
  }
  return { newest_ts_ms: newest, oldest_ts_ms: oldest };
}

function combine(a: Range, b: Range): Range {
  if (!a || !b) return a ?? b;
  return {
    newest_ts_ms: Math.max(a.newest_ts_ms, b.newest_ts_ms),
    oldest_ts_ms: Math.min(a.oldest_ts_ms, b.oldest_ts_ms),
  };
}

/** An empty shard reports 0 for both timestamps. */
function setStats(entry: ManifestEntry, range: Range, records: number): void {
  entry.records = records;
  entry.newest_ts_ms = range?.newest_ts_ms ?? 0;
  entry.oldest_ts_ms = range?.oldest_ts_ms ?? 0;
}

function sumSkipped(
  a: Record<string, number> | undefined,
  b: Record<string, number> | undefined,
): Record<string, number> {
  const out: Record<string, number> = { ...a };
  for (const [reason, n] of Object.entries(b ?? {})) out[reason] = (out[reason] ?? 0) + n;
  return out;
}

function isEmpty(s: ShardSegment): boolean {
  return s.records.length === 0 && s.marks.length === 0;
}

function sameList(a: readonly string[], b: readonly string[] | null): boolean {
  return b !== null && a.length === b.length && a.every((x, i) => x === b[i]);
}
