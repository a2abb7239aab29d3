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
import { SOURCES } from "../record.ts";
import { SEGMENT_SCHEMA } from "./types.ts";

type Obj = Record<string, unknown>;

const SOURCE_SET: ReadonlySet<unknown> = new Set(SOURCES);
const HASH16 = /^[0-9a-f]{16}$/;

const int = (x: unknown): x is number => Number.isSafeInteger(x);
const nat = (x: unknown): boolean => int(x) && x >= 0;
const pos = (x: unknown): boolean => int(x) && x > 0;
const str = (x: unknown): x is string => typeof x === "string";
const nonEmpty = (x: unknown): boolean => str(x) && x.length > 0;
const relFile = (x: unknown): boolean => str(x) && x.length > 0 && x.length <= 512;
const hash16 = (x: unknown): boolean => str(x) && HASH16.test(x);

function isObj(x: unknown): x is Obj {
  return x !== null && typeof x === "object" && !Array.isArray(x);
}

/** Every own key of `o` is one of `allowed`. */
function onlyKeys(o: Obj, allowed: ReadonlySet<string>): boolean {
  for (const k in o) if (!allowed.has(k)) return false;
  return true;
}

const SEGMENT_KEYS = new Set(["schema", "parser_version", "key", "records", "marks"]);
const RECORD_KEYS = new Set([
  "id",
  "source",
  "session_id",
  "role",
  "ts_ms",
  "text",
  "truncated",
  "locator",
  "order",
  "seq",
  "user_turn",
  "item_id",
  "generation",
  "subagent",
]);

/** Locator kind → its exact key set and field checks (LocatorSchema's strict objects). */
const LOCATORS: Record<string, { keys: ReadonlySet<string>; ok: (l: Obj) => boolean }> = {
  native_message_id: {
    keys: new Set(["v", "kind", "message_seq", "line", "hash"]),
    ok: (l) => nat(l.message_seq) && pos(l.line) && hash16(l.hash),
  },
  native_event: {
    keys: new Set(["v", "kind", "line", "hash"]),
    ok: (l) => pos(l.line) && hash16(l.hash),
  },
  native_sidecar_span: {
    keys: new Set(["v", "kind", "file", "offset", "len", "line", "hash"]),
    ok: (l) => relFile(l.file) && nat(l.offset) && nat(l.len) && pos(l.line) && hash16(l.hash),
  },
  external_record_id: {
    keys: new Set(["v", "kind", "record_id", "file", "hash"]),
    ok: (l) => relFile(l.record_id) && relFile(l.file) && hash16(l.hash),
  },
  external_line: {
    keys: new Set(["v", "kind", "file", "generation", "line", "hash"]),
    ok: (l) => relFile(l.file) && nat(l.generation) && pos(l.line) && hash16(l.hash),
  },
};

function isLocator(l: unknown): boolean {
  if (!isObj(l) || l.v !== 1 || !str(l.kind) || !Object.hasOwn(LOCATORS, l.kind)) return false;
  const spec = LOCATORS[l.kind]!;
  return onlyKeys(l, spec.keys) && spec.ok(l);
}

function isRecord(r: unknown): boolean {
  if (!isObj(r) || !onlyKeys(r, RECORD_KEYS)) return false;
  return nonEmpty(r.id) && SOURCE_SET.has(r.source) && nonEmpty(r.session_id) &&
    (r.role === "user" || r.role === "assistant") && int(r.ts_ms) && str(r.text) &&
    typeof r.truncated === "boolean" && isLocator(r.locator) && nat(r.order) &&
    (r.seq === undefined || nat(r.seq)) && (r.user_turn === undefined || nat(r.user_turn)) &&
    (r.item_id === undefined || str(r.item_id)) && nat(r.generation) &&
    typeof r.subagent === "boolean";
}

/**
 * True when `v` is exactly a ShardSegment apart from its marks, which the caller still
 * validates with zod (a handful per segment).
 */
export function isExactSegment(v: unknown): boolean {
  if (!isObj(v) || !onlyKeys(v, SEGMENT_KEYS)) return false;
  if (v.schema !== SEGMENT_SCHEMA || !nat(v.parser_version) || !str(v.key)) return false;
  if (!Array.isArray(v.records) || !Array.isArray(v.marks)) return false;
  for (const r of v.records) if (!isRecord(r)) return false;
  return true;
}
