/**
 * Private to store/: applies one ShardUpdate to a publish draft (the manifest being
 * built under the lock). Returns null when accepted, else the rejection reason:
 *  - "tombstoned"       the key was deliberately deleted (sticky until the window expires);
 *  - "base_moved"       append/touch/gone whose base differs from the entry's generations;
 *  - "stale_watermark"  replace with a lower watermark over the same fingerprint and the
 *                       same cursor paths: a writer that lost a race;
 *  - "invalid"          the segment or the resulting entry fails the schema (an extractor
 *                       bug; writing it would poison every later read), or a pre-encoded
 *                       segment's name is not its hash or its header names another key
 *                       or parser version (a worker bug: never written);
 *  - "corrupt_base"     compaction found a base generation missing or corrupt; the entry
 *                       is quarantined (types.ts) so the next sweep re-derives it with a
 *                       replace, and readers meanwhile report it instead of missing it.
 * A "quarantine" update (a damaged generation found by a reader or the startup check) is
 * accepted only over the exact generations list it names, like append/touch/gone, and is
 * a no-op on an entry already quarantined.
 * Ordering: a new generation is written (durably) before the draft references it, so the
 * manifest written afterwards never names a missing file. Segments are written as
 * encoded; only a merge decodes records (the bases' and the new tail's) and re-encodes.
 */
import type { Fs } from "../../durable/mod.ts";
import { NotFoundError } from "../../errors.ts";
import { type MessageRecord, SOURCES, type SupersessionMark } from "../record.ts";
import { join } from "node:path";
import { CorruptGenerationError, loadSegment, writeSegment } from "./segments.ts";
import { encodeSegment, segmentName } from "./segment_encode.ts";
import { decodeRecords, decodeSegment, type SegmentView } from "./segment_view.ts";
import {
  type EncodedSegment,
  type Manifest,
  type ManifestEntry,
  ManifestEntrySchema,
  SEGMENT_SCHEMA,
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
  /** Every generation this publish wrote (or found already written), for summary_pack.ts. */
  written: EncodedSegment[];
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
  if ((u.kind === "replace" || u.kind === "append") && !u.segment && !u.encoded) {
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
  let segment: Encoded | null = null;
  if (u.kind === "replace" || u.kind === "append") {
    segment = encodedOf(u, ctx);
    if (segment === null) return "invalid";
  }
  // An empty append carries no data: no generation, same as a touch.
  if (u.kind === "append" && segment && isEmpty(segment.view)) segment = null;
  const checked = ManifestEntrySchema.safeParse(buildEntry(u, old, ctx.nowMs));
  if (!checked.success) return "invalid";
  const entry = checked.data;
  if (u.kind === "replace") {
    const { view } = segment!;
    entry.generations = [await write(segment!.encoded, ctx)];
    setStats(entry, tsRange(view), view.count);
  } else if (u.kind === "append" && segment) {
    const prev = old!;
    const { view } = segment;
    if (prev.generations.length + 1 > COMPACT_MAX_SEGMENTS) {
      const from = await mergeStart(prev.generations, segment.encoded, ctx);
      const merged = await mergeSegments(prev.generations.slice(from), segment, { ...ctx, u });
      if (merged === null) {
        d.sessions[u.key] = quarantinedEntry(prev, ctx.nowMs);
        d.changed = true;
        return "corrupt_base";
      }
      entry.generations = [...prev.generations.slice(0, from), await write(merged, ctx)];
    } else {
      entry.generations = [...prev.generations, await write(segment.encoded, ctx)];
    }
    const range = combine(prev.records > 0 ? prev : null, tsRange(view));
    setStats(entry, range, prev.records + view.count);
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

/** An update's segment, encoded, with the view its header facts are read from. */
interface Encoded {
  encoded: EncodedSegment;
  view: SegmentView;
}

/**
 * The update's segment as written: its pre-encoded bytes after the checks (name = hash of
 * the bytes, header names this key and parser version), or its records encoded here; null
 * when either is invalid.
 */
function encodedOf(u: ShardUpdate, ctx: ApplyContext): Encoded | null {
  let encoded = u.encoded;
  if (encoded === undefined) {
    try {
      encoded = encodeSegment({
        schema: SEGMENT_SCHEMA,
        parser_version: ctx.pv,
        key: u.key,
        records: u.segment!.records,
        marks: u.segment!.marks,
      });
    } catch (err) {
      if (err instanceof TypeError) return null;
      throw err;
    }
  } else if (segmentName(encoded.bytes) !== encoded.name) return null;
  let view: SegmentView;
  try {
    view = decodeSegment(encoded.bytes, encoded.name);
  } catch (err) {
    if (err instanceof CorruptGenerationError) return null;
    throw err;
  }
  if (view.key !== u.key || view.parserVersion !== ctx.pv) return null;
  return { encoded, view };
}

/** Writes `e` (or reuses its identical file) and remembers it for the summaries pack. */
async function write(e: EncodedSegment, ctx: ApplyContext): Promise<string> {
  const name = await writeSegment(ctx.genDir, e, ctx);
  ctx.written.push(e);
  return name;
}

/**
 * Index of the first generation to merge: the oldest one no larger than
 * COMPACT_TAIL_RATIO × the bytes after it. Sizes come from a stat of each file; a
 * generation that cannot be stat'ed starts the merge at 0, whose load then reports it.
 */
async function mergeStart(gens: string[], tail: EncodedSegment, ctx: ApplyContext) {
  const sizes: number[] = [];
  for (const g of gens) {
    try {
      sizes.push((await ctx.fs.stat(join(ctx.genDir, g))).size);
    } catch (err) {
      if (err instanceof Deno.errors.NotFound) return 0;
      throw err;
    }
  }
  let after = tail.bytes.length;
  let from = gens.length;
  for (let i = gens.length - 1; i >= 0; i--) {
    after += sizes[i]!;
    if (sizes[i]! <= COMPACT_TAIL_RATIO * (after - sizes[i]!)) from = i;
  }
  return Math.min(from, gens.length - 1);
}

/**
 * The base segments `gens` with `tail` appended, re-encoded as one; null when a base is
 * missing or corrupt.
 */
async function mergeSegments(
  gens: string[],
  tail: Encoded,
  ctx: ApplyContext & { u: ShardUpdate },
): Promise<EncodedSegment | null> {
  const records: MessageRecord[] = [];
  const marks: SupersessionMark[] = [];
  const parts: SegmentView[] = [];
  try {
    for (const g of gens) parts.push(await loadSegment(ctx.fs, ctx.genDir, g));
    parts.push(tail.view);
    // Loops, not push(...xs): a spread of 100k+ records overflows the call stack.
    for (const p of parts) {
      for (const r of decodeRecords(p)) records.push(r);
      for (const m of p.marks) marks.push(m);
    }
  } catch (err) {
    if (err instanceof CorruptGenerationError || err instanceof NotFoundError) return null;
    throw err;
  }
  return encodeSegment({
    schema: SEGMENT_SCHEMA,
    parser_version: ctx.pv,
    key: ctx.u.key,
    records,
    marks,
  });
}

type Range = { newest_ts_ms: number; oldest_ts_ms: number } | null;

function tsRange(v: SegmentView): Range {
  return v.count === 0 ? null : { newest_ts_ms: v.maxTs, oldest_ts_ms: v.minTs };
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

function isEmpty(v: SegmentView): boolean {
  return v.count === 0 && v.marks.length === 0;
}

function sameList(a: readonly string[], b: readonly string[] | null): boolean {
  return b !== null && a.length === b.length && a.every((x, i) => x === b[i]);
}
