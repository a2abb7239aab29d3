/**
 * MessageRecord ↔ `intendant.records` row: the one place that decides how a local record
 * is stored in the team replica (schema_v1.ts) and how its original text comes back.
 * Invariants:
 *  - `folded` is exactly lib/message_search's fold() of the original text, so plain LIKE
 *    over it selects what the local engine's substring match selects (modulo the boundary
 *    rule, which `has_marks` rows recheck: query_sql.ts);
 *  - PostgreSQL text cannot hold U+0000: pgText() replaces each with U+FFFD and records the
 *    UTF-16 offsets in `nul_at`; restoreText() puts them back, so highlights computed from
 *    the replica are byte-exact against the original;
 *  - role 1 = user, 2 = assistant (smallint: the column is read by every filter).
 */
import { encodeLocator, fold, type MessageRecord, type Source } from "../message_search/mod.ts";

/** A records row as the publisher writes it (column names as in schema_v1.ts). */
export interface RecordRow {
  machine: string;
  session_key: string;
  record_id: string;
  ord: number;
  source: Source;
  role: 1 | 2;
  ts_ms: number;
  seq: number | null;
  truncated: boolean;
  subagent: boolean;
  superseded: boolean;
  has_marks: boolean;
  text: string;
  nul_at: number[] | null;
  folded: string;
  locator: string;
  rev_added: number;
}

/** Column order of RecordRow for COPY / multi-row INSERT. */
export const RECORD_COLUMNS = [
  "machine",
  "session_key",
  "record_id",
  "ord",
  "source",
  "role",
  "ts_ms",
  "seq",
  "truncated",
  "subagent",
  "superseded",
  "has_marks",
  "text",
  "nul_at",
  "folded",
  "locator",
  "rev_added",
] as const satisfies readonly (keyof RecordRow)[];

/**
 * A combining mark or a Hangul medial/final jamo: the units query/match.ts's boundary rule
 * looks at after a match. Folded text without any can never have a LIKE match rejected.
 */
const CONTINUATION_RE = /[\p{M}\u1160-\u11FF]/u;

/** True when the boundary rule can reject a LIKE match in `folded`. */
export function hasContinuation(folded: string): boolean {
  // ASCII-only folded text (the common case) cannot hold one.
  // deno-lint-ignore no-control-regex
  return !/^[\x00-\x7f]*$/.test(folded) && CONTINUATION_RE.test(folded);
}

/** `s` storable as PostgreSQL text, and where its U+0000 units were (null when none). */
export function pgText(s: string): { text: string; nulAt: number[] | null } {
  if (!s.includes("\u0000")) return { text: s, nulAt: null };
  const nulAt: number[] = [];
  for (let i = s.indexOf("\u0000"); i >= 0; i = s.indexOf("\u0000", i + 1)) nulAt.push(i);
  return { text: s.replaceAll("\u0000", "\uFFFD"), nulAt };
}

/** The original text of a stored row (U+0000 put back where pgText replaced it). */
export function restoreText(text: string, nulAt: readonly number[] | null): string {
  if (nulAt === null || nulAt.length === 0) return text;
  const units = text.split("");
  for (const i of nulAt) if (units[i] === "\uFFFD") units[i] = "\u0000";
  return units.join("");
}

/** Display text (titles, projects, ids) storable as PostgreSQL text: U+0000 → U+FFFD. */
export function pgLabel(s: string): string;
export function pgLabel(s: string | null): string | null;
export function pgLabel(s: string | null): string | null {
  return s === null ? null : s.replaceAll("\u0000", "\uFFFD");
}

/** The row for `rec` of machine `machine`'s session `sessionKey`. */
export function toRecordRow(
  rec: MessageRecord,
  o: { machine: string; sessionKey: string; superseded: boolean; rev: number },
): RecordRow {
  const { text, nulAt } = pgText(rec.text);
  const folded = pgText(fold(rec.text)).text;
  return {
    machine: o.machine,
    session_key: pgLabel(o.sessionKey),
    record_id: pgLabel(rec.id),
    ord: rec.order,
    source: rec.source,
    role: rec.role === "user" ? 1 : 2,
    ts_ms: rec.ts_ms,
    seq: rec.seq ?? null,
    truncated: rec.truncated,
    subagent: rec.subagent,
    superseded: o.superseded,
    has_marks: hasContinuation(folded),
    text,
    nul_at: nulAt,
    folded,
    locator: encodeLocator(rec.locator),
    rev_added: o.rev,
  };
}
