/**
 * One extract call as plain data, and what it produces in the shape the publisher needs.
 * The SAME function ({@link runUnitJob}) runs in the indexer's thread and in an
 * extraction worker, so a unit's outcome cannot depend on where it was extracted: that is
 * what makes a store built with one worker identical to one built with many.
 *
 * A content outcome carries a {@link ContentSummary} (what the indexer counts and batches
 * by) and either its records (the publisher encodes them, as before the pool existed) or
 * the segment already encoded (a worker encodes where it extracted, and transfers the
 * bytes instead of cloning every record object: measured, cloning 530k records costs
 * 1.6–3.1 s of CPU, transferring their encoded bytes nothing).
 */
import type {
  ExtractContext,
  Extractor,
  ExtractOutcome,
  PriorShard,
  SessionUnit,
  ShardContent,
} from "../extract/mod.ts";
import type { MessageRecord } from "../record.ts";
import { type EncodedSegment, encodeUnitSegment } from "./encode.ts";

/** One extract call, structured-clone safe. */
export interface UnitJob {
  unit: SessionUnit;
  prior: PriorShard | null;
  ctx: ExtractContext;
}

/** What the indexer needs to know of a content outcome without its records. */
export interface ContentSummary {
  records: number;
  /** Sum of the records' text lengths (UTF-16 units): the publish batch measure. */
  textUnits: number;
  /** Newest record ts (0 when there are none, like the indexer's own reduce). */
  newestTsMs: number;
}

/** A content outcome ready for the publisher. */
export interface PreparedContent extends Omit<ShardContent, "records"> {
  /** The records, unless the segment was encoded where it was extracted. */
  records: MessageRecord[] | null;
  encoded: EncodedSegment | null;
  summary: ContentSummary;
}

/** What one unit produced. */
export type UnitResult = Exclude<ExtractOutcome, ShardContent> | PreparedContent;

/** How a worker encodes what it extracted (null: hand the records over). */
export interface EncodeSpec {
  parserVersion: number;
}

/** Summarizes `records` (one pass; no copies). */
export function summarize(records: readonly MessageRecord[]): ContentSummary {
  let textUnits = 0;
  let newestTsMs = 0;
  for (const r of records) {
    textUnits += r.text.length;
    if (r.ts_ms > newestTsMs) newestTsMs = r.ts_ms;
  }
  return { records: records.length, textUnits, newestTsMs };
}

/**
 * Runs `ex.extract` for `job`. With `encode`, a non-empty content outcome comes back
 * encoded and without its records; an empty one keeps its (empty) records, since the
 * indexer does not publish an empty new shard and the publisher treats an empty append
 * as a touch.
 */
export async function runUnitJob(
  ex: Extractor,
  job: UnitJob,
  encode: EncodeSpec | null,
): Promise<UnitResult> {
  const out = await ex.extract(job.unit, job.prior, job.ctx);
  if (out.kind === "unchanged" || out.kind === "gone" || out.kind === "nothing") return out;
  const summary = summarize(out.records);
  if (encode === null || out.records.length === 0) {
    return { ...out, records: out.records, encoded: null, summary };
  }
  let encoded: EncodedSegment;
  try {
    encoded = encodeUnitSegment({
      key: job.unit.key,
      parserVersion: encode.parserVersion,
      records: out.records,
      marks: out.marks,
    });
  } catch (err) {
    // The encoder refuses a record the schemas refuse (an extractor bug): hand the
    // records over so the publisher rejects the update as "invalid", exactly as it
    // would have without a worker.
    if (err instanceof TypeError) return { ...out, records: out.records, encoded: null, summary };
    throw err;
  }
  return { ...out, records: null, encoded, summary };
}
