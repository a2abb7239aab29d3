/**
 * Encoding a unit's segment where it was extracted (issue 16 §4): the bytes and the
 * content name the publisher writes as they are (ShardUpdate.encoded). Pure and
 * worker-safe: it only calls the store's `encodeSegment`, so a worker's bytes are exactly
 * the bytes the publisher would have produced from the same records. The store checks
 * them before writing (the name is the hash of the bytes, the header names this key and
 * its parser version).
 */
import {
  type EncodedSegment,
  encodeSegment,
  SEGMENT_SCHEMA,
  type ShardSegment,
} from "../store/mod.ts";
import type { MessageRecord, SupersessionMark } from "../record.ts";

export type { EncodedSegment };

/**
 * Whether workers encode (and transfer bytes) instead of handing their records over:
 * cloning 530k records to the main thread costs 1.6–3.1 s of CPU (measured), the bytes
 * transfer for free.
 */
export const STORE_TAKES_ENCODED = true;

/** Encodes one unit's new segment exactly as the publisher would. */
export function encodeUnitSegment(o: {
  key: string;
  parserVersion: number;
  records: MessageRecord[];
  marks: SupersessionMark[];
}): EncodedSegment {
  const segment: ShardSegment = {
    schema: SEGMENT_SCHEMA,
    parser_version: o.parserVersion,
    key: o.key,
    records: o.records,
    marks: o.marks,
  };
  return encodeSegment(segment);
}
