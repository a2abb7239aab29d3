/**
 * The shard store's on-disk types. Layout under the store root (`…/message_search/v2`):
 *   manifest.json           the manifest snapshot, replaced by atomic rename
 *   manifest.journal        publishes since the snapshot, one delta line each (journal.ts)
 *   writer.lock             advisory writer lock (flock; efficiency, not correctness)
 *   summaries.pack          every generation's summary, a cache (summary_pack.ts)
 *   lexicon.pack            one vocabulary over the generations, a cache (lexicon_pack.ts)
 *   generations/<h16>.seg   immutable, content-named binary shard segments (segment_layout.ts)
 * The directory name is the manifest's shape: `v1` held JSON generations named `.json`,
 * and a binary that knows only v1 treats any other generation name as a corrupt manifest
 * (it would quarantine ours and write its own), so the binary format lives in `v2` and
 * never meets an older binary; `v1` is never read here.
 * A session's shard is the ordered list of segments its manifest entry names; records and
 * marks concatenate in that order. Generations are durable before the manifest that names
 * them; GC deletes only what no manifest references (plus a grace period for in-flight
 * readers pinned to an older revision).
 *
 * Quarantine (reliability-plan F8): an entry whose generation was found damaged (hash
 * mismatch, unparsable, missing) is rewritten by a "quarantine" update to name NO
 * generations (the damaged file is retired and left for GC, never served again), with its
 * cursors, state, watermark and fingerprint dropped so the next sweep re-derives the shard
 * from its sources, and `quarantined_at_ms` set. It keeps its source, meta, skip counts,
 * source_gone and ts range (so filters, retention and reports still place it). A replace
 * ends the quarantine; a quarantined entry whose source is gone cannot be re-derived: it
 * stays quarantined (its messages are lost to the index) until its source returns, it is
 * deleted, or it leaves the retention window.
 */
import { z } from "zod";
import { type MessageRecord, SOURCES, type SupersessionMark } from "../record.ts";
import { FileCursorSchema } from "../cursor_types.ts";

export const MANIFEST_SCHEMA = 1;
/**
 * The segment file format (segment_layout.ts); 1 was JSON (store `v1`), 2 had no TERMS
 * section, 3 stored TERMS with UTF-16 vocabularies and u32 offset tables.
 */
export const SEGMENT_SCHEMA = 4;

/** One generation's content: what encodeSegment writes and decodeRecords reads back. */
export interface ShardSegment {
  schema: typeof SEGMENT_SCHEMA;
  parser_version: number;
  key: string;
  records: MessageRecord[];
  marks: SupersessionMark[];
}

/** A segment file's exact bytes and its content name (`<hash16>.seg`): encodeSegment's result. */
export interface EncodedSegment {
  bytes: Uint8Array;
  name: string;
}

/** Display facts about a session, carried in the manifest so listings need no shard load. */
export const EntryMetaSchema = z.object({
  project: z.string().nullable(),
  title: z.string().nullable(),
  parent_session_id: z.string().nullable(),
  /** Source files the session was read from (for the catalog and jump-to-hit). */
  files: z.array(z.string()),
});
export type EntryMeta = z.infer<typeof EntryMetaSchema>;

export const ManifestEntrySchema = z.object({
  source: z.enum(SOURCES),
  session_id: z.string().min(1),
  /** Segment file names (`<hash16>.seg`), in order. */
  generations: z.array(z.string().regex(/^[0-9a-f]{16}\.seg$/)),
  records: z.number().int().nonnegative(),
  newest_ts_ms: z.number().int(),
  oldest_ts_ms: z.number().int(),
  /** Sum of consumed offsets over the cursors (the stale-writer gate compares it). */
  source_watermark: z.number().int().nonnegative(),
  /** Hash over the cursor set's identities; a change means a legitimate rebuild. */
  source_fingerprint: z.string(),
  cursors: z.record(z.string(), FileCursorSchema),
  /** Extractor carry-over for incremental reads (small, extractor-defined). */
  state: z.unknown(),
  source_gone: z.boolean(),
  meta: EntryMetaSchema,
  /** Skipped input by reason, cumulative over the shard's life. */
  skipped: z.record(z.string(), z.number().int().nonnegative()),
  published_at_ms: z.number().int(),
  /**
   * Set while the shard is quarantined (see the header): found damaged and not yet
   * re-derived. Absent on a healthy entry; older parsers strip it, and see an entry with
   * no generations and no cursors, which they re-derive as well.
   */
  quarantined_at_ms: z.number().int().optional(),
});
export type ManifestEntry = z.infer<typeof ManifestEntrySchema>;

export const ManifestSchema = z.object({
  schema: z.literal(MANIFEST_SCHEMA),
  parser_version: z.number().int().nonnegative(),
  /** Monotonic: max(previous + 1, now ms) on every publish; pins query snapshots. */
  revision: z.number().int().nonnegative(),
  updated_at_ms: z.number().int(),
  sessions: z.record(z.string(), ManifestEntrySchema),
  /** key → deletion time (ms); expires with the retention window. */
  tombstones: z.record(z.string(), z.number().int()),
  /**
   * Generation name → when a publish stopped naming it (ms), kept for GC_GRACE_MS. GC
   * measures a retired generation's grace from here, not from its mtime: a generation
   * written hours ago is old by mtime the instant a publish retires it, while a query
   * pinned to the previous revision may be about to open it (A15). Absent when empty.
   */
  retired: z.record(z.string(), z.number().int()).optional(),
});
export type Manifest = z.infer<typeof ManifestSchema>;

/** `<source>:<session_id>` */
export function sessionKey(source: string, sessionId: string): string {
  return `${source}:${sessionId}`;
}

/**
 * One session's change in a publish batch.
 *  - replace: the shard becomes exactly `segment` (a rebuild);
 *  - append:  `segment` is added after the current segments (incremental read);
 *  - touch:   only cursors/state/meta/skipped change (e.g. non-prose lines appended);
 *  - gone:    the sources vanished: keep serving, flag source_gone;
 *  - quarantine: a generation of the shard was found damaged: stop serving the shard and
 *             make the next sweep re-derive it (see the header); needs only key/source/id/base.
 * `base` is the generations list the writer read (null for a session it believes new);
 * append/touch/gone/quarantine are rejected when the entry moved on meanwhile (optimistic
 * concurrency: a quarantine over a list that no longer names the damaged generation would
 * throw away a healthy shard).
 */
export interface ShardUpdate {
  kind: "replace" | "append" | "touch" | "gone" | "quarantine";
  key: string;
  source: z.infer<typeof ManifestEntrySchema>["source"];
  session_id: string;
  base: string[] | null;
  /** The records and marks to add (replace/append need this or `encoded`). */
  segment?: { records: MessageRecord[]; marks: SupersessionMark[] };
  /**
   * The segment already encoded (encodeSegment, e.g. in an extraction worker, with this
   * store's parser version and this key): written as is when no merge is needed. Checked
   * before writing — its name must be the hash of its bytes and its header must name this
   * key and parser version — else the update is rejected as "invalid". When both are
   * given, `encoded` is authoritative and `segment` is not re-encoded.
   */
  encoded?: EncodedSegment;
  cursors?: ManifestEntry["cursors"];
  state?: unknown;
  source_watermark?: number;
  source_fingerprint?: string;
  meta?: EntryMeta;
  /** Skips found by THIS read (added to the entry's cumulative counts; replace resets). */
  skipped?: Record<string, number>;
}

/** Outcome of a publish batch. */
export interface PublishResult {
  /** The manifest revision after the publish (unchanged when nothing was accepted). */
  revision: number;
  accepted: string[];
  rejected: { key: string; reason: string }[];
}

/**
 * A generation a reader found damaged (CorruptGenerationError or NotFoundError on load):
 * what the query engine and the detail view hand to the indexer, which quarantines the
 * shard if its entry still names that generation, and re-derives it.
 */
export interface ShardDamage {
  key: string;
  /** The generation that failed to load. */
  generation: string;
}
