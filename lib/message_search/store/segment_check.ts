/**
 * A non-copying shape check for a parsed generation: true only when the value is exactly
 * a ShardSegment whose records are exactly MessageRecords (no unknown keys, every type
 * and bound as the zod schemas say). Why: zod builds a full copy of every record while
 * validating, which was half of a cold segment load (72–176 ms of a 24,000-record
 * generation) and most of its garbage. loadSegment uses the raw parsed value when this
 * holds and falls back to zod otherwise (which reports the problem, or strips keys a
 * newer writer added), so the outcome is the same as validating with zod alone.
 * Invariant: isExactSegment(v) implies ShardSegmentSchema.parse(v) deep-equals v (the
 * segment_check test pins it on generated records and on every way to break one).
 */
import type { Locator } from "../locator.ts";
import { type MessageRecord, SOURCES } from "../record.ts";
import { SEGMENT_SCHEMA } from "./types.ts";

type Obj = Record<string, unknown>;
type Check = (x: unknown) => boolean;

const SOURCE_SET: ReadonlySet<unknown> = new Set(SOURCES);
const HASH16 = /^[0-9a-f]{16}$/;

const int = (x: unknown): x is number => Number.isSafeInteger(x);
const nat: Check = (x) => int(x) && x >= 0;
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
 * written: the fast path can never accept a record zod would refuse for a field it forgot.
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
  order: nat,
  seq: optional(nat),
  user_turn: optional(nat),
  item_id: optional(str),
  generation: nat,
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
  external_record_id: { record_id: relFile, file: relFile, hash: hash16 },
  external_line: { file: relFile, generation: nat, line: pos, hash: hash16 },
};

/** A field table flattened for the hot loop: the key set and the [key, check] pairs. */
interface Table {
  keys: ReadonlySet<string>;
  checks: readonly (readonly [string, Check])[];
}

function table(fields: Record<string, Check>, extra: readonly string[] = []): Table {
  return { keys: new Set([...Object.keys(fields), ...extra]), checks: Object.entries(fields) };
}

/** Every own key of `o` is in the table, and every check holds (a missing field too). */
function fieldsHold(o: Obj, t: Table): boolean {
  for (const k in o) if (!t.keys.has(k)) return false;
  for (const [k, check] of t.checks) if (!check(o[k])) return false;
  return true;
}

const RECORD_TABLE = table(RECORD_FIELDS);
const LOCATOR_TABLES = new Map<unknown, Table>(
  Object.entries(LOCATOR_FIELDS).map(([kind, f]) => [kind, table(f, ["v", "kind"])]),
);

function isLocator(l: unknown): boolean {
  if (!isObj(l) || l.v !== 1) return false;
  const t = LOCATOR_TABLES.get(l.kind);
  return t !== undefined && fieldsHold(l, t);
}

const SEGMENT_KEYS = new Set(["schema", "parser_version", "key", "records", "marks"]);

/**
 * True when `v` is exactly a ShardSegment apart from its marks, which the caller still
 * validates with zod (a handful per segment).
 */
export function isExactSegment(v: unknown): boolean {
  if (!isObj(v)) return false;
  for (const k in v) if (!SEGMENT_KEYS.has(k)) return false;
  if (v.schema !== SEGMENT_SCHEMA || !nat(v.parser_version) || !str(v.key)) return false;
  if (!Array.isArray(v.records) || !Array.isArray(v.marks)) return false;
  for (const r of v.records) if (!isObj(r) || !fieldsHold(r, RECORD_TABLE)) return false;
  return true;
}
