/**
 * The segment encoder's input check: which field of a record (if any) MessageRecordSchema
 * would refuse, without zod's copy of every record (zod built a full copy while
 * validating: half of a cold segment load and most of its garbage, when segments were
 * JSON). Invariant: checkRecord(r) is null exactly when MessageRecordSchema accepts r
 * with its numbers inside the segment columns' ranges (order and generation u32,
 * user_turn i32 — no source comes near: orders count the records of one shard). Unknown
 * record keys are ignored (zod strips them, and the encoder stores only known fields);
 * unknown locator keys are refused (LocatorSchema's objects are strict).
 */
import type { Locator } from "../locator.ts";
import { type MessageRecord, SOURCES } from "../record.ts";

type Obj = Record<string, unknown>;
type Check = (x: unknown) => boolean;

const SOURCE_SET: ReadonlySet<unknown> = new Set(SOURCES);
const HASH16 = /^[0-9a-f]{16}$/;
const U32_MAX = 0xffffffff;
const I32_MAX = 0x7fffffff;

const int = (x: unknown): x is number => Number.isSafeInteger(x);
const nat: Check = (x) => int(x) && x >= 0;
const u32: Check = (x) => int(x) && x >= 0 && x <= U32_MAX;
const pos: Check = (x) => int(x) && x > 0;
const str = (x: unknown): x is string => typeof x === "string";
const bool: Check = (x) => typeof x === "boolean";
const nonEmpty: Check = (x) => str(x) && x.length > 0;
const relFile: Check = (x) => str(x) && x.length > 0 && x.length <= 512;
const hash16: Check = (x) => str(x) && HASH16.test(x);
const optional = (c: Check): Check => (x) => x === undefined || c(x);

function isObj(x: unknown): x is Obj {
  return x !== null && typeof x === "object" && !Array.isArray(x);
}

/**
 * One check per MessageRecord field. Typed against the schema's inferred type, so a field
 * added to or removed from MessageRecordSchema fails to compile here until its check is
 * written: the encoder can never accept a record zod would refuse for a field it forgot.
 */
const RECORD_FIELDS: { [K in keyof Required<MessageRecord>]: Check } = {
  id: nonEmpty,
  source: (x) => SOURCE_SET.has(x),
  session_id: nonEmpty,
  role: (x) => x === "user" || x === "assistant",
  ts_ms: int,
  text: str,
  truncated: bool,
  locator: isLocator,
  order: u32,
  seq: optional(nat),
  user_turn: optional((x) => int(x) && x >= 0 && x <= I32_MAX),
  item_id: optional(str),
  generation: u32,
  subagent: bool,
};

type LocatorFields<K extends Locator["kind"]> = {
  [F in Exclude<keyof Extract<Locator, { kind: K }>, "v" | "kind">]-?: Check;
};

/** Locator kind → one check per field besides v and kind (LocatorSchema's strict objects). */
const LOCATOR_FIELDS: { [K in Locator["kind"]]: LocatorFields<K> } = {
  native_message_id: { message_seq: nat, line: pos, hash: hash16 },
  native_event: { line: pos, hash: hash16 },
  native_sidecar_span: { file: relFile, offset: nat, len: nat, line: pos, hash: hash16 },
  external_record_id: {
    record_id: (x) => str(x) && x.length > 0 && x.length <= 512,
    file: relFile,
    hash: hash16,
  },
  external_line: { file: relFile, generation: nat, line: pos, hash: hash16 },
};

const RECORD_CHECKS = Object.entries(RECORD_FIELDS);
const LOCATOR_TABLES = new Map<unknown, { keys: Set<string>; checks: [string, Check][] }>(
  Object.entries(LOCATOR_FIELDS).map((
    [kind, f],
  ) => [kind, { keys: new Set([...Object.keys(f), "v", "kind"]), checks: Object.entries(f) }]),
);

function isLocator(l: unknown): boolean {
  if (!isObj(l) || l.v !== 1) return false;
  const t = LOCATOR_TABLES.get(l.kind);
  if (t === undefined) return false;
  for (const k in l) if (!t.keys.has(k)) return false;
  for (const [k, check] of t.checks) if (!check(l[k])) return false;
  return true;
}

/** The first field of `r` the record schema refuses, or null when `r` is a valid record. */
export function checkRecord(r: unknown): string | null {
  if (!isObj(r)) return "(record)";
  for (const [k, check] of RECORD_CHECKS) if (!check(r[k])) return k;
  return null;
}
