/**
 * The SQL text of team search (pure: strings and parameter lists, no connection). It owns
 * the three translations that make PostgreSQL answer exactly what the local engine
 * answers (lib/message_search/query):
 *  - needles: app-folded needles matched with plain `LIKE` on the app-folded column
 *    `records.folded`; `\`, `%` and `_` are escaped with `\` (LIKE's default escape with
 *    standard_conforming_strings on), so a needle is always a literal substring;
 *  - the boundary rule (query/match.ts: a match followed by a combining mark or a Hangul
 *    medial/final jamo is no match): only rows with `has_marks` can be affected, and only
 *    those are rechecked with an ARE negative lookahead `needle(?![marks])`, the class
 *    built from the \p{M} ranges of this runtime's Unicode tables plus U+1160–U+11FF —
 *    the same tables the local engine's marksTable() reads, so both engines agree;
 *  - filters: role, source, machine, time bounds (retention cutoff folded in),
 *    supersession, the revision a cursor pins (per machine, `rev_added <= R[machine]`) and the project
 *    (folded substring of sessions.project_folded).
 * Invariants: every value travels as a bind parameter ($n), never spliced into the text;
 * needles never hold U+0000 (parse_query drops it), and a project filter's U+0000 is sent
 * as U+FFFD — the replica stores U+FFFD for it (record_row.ts pgLabel), so a project
 * containing U+0000 still matches (a project holding a literal U+FFFD matches too: a
 * deliberate, harmless widening).
 */
import { ROLE_ASSISTANT, ROLE_USER, type Source } from "../message_search/mod.ts";

/** Bind parameters of one statement: `add(v)` returns its placeholder. */
export class SqlParams {
  readonly values: unknown[] = [];
  add(v: unknown): string {
    this.values.push(v);
    return `$${this.values.length}`;
  }
}

/** `needle` as a LIKE pattern matching it anywhere, literally. */
export function likeContains(needle: string): string {
  return `%${needle.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
}

/** ARE metacharacters (a backslash before a non-alphanumeric character makes it literal). */
const ARE_SPECIAL = /[\\^$.|?*+()[\]{}]/g;

let marksClass: string | null = null;

/**
 * The bracket expression of every unit that continues a character: each \p{M} range (as
 * literal characters, never escapes — ARE's \uXXXX would do, but literals keep the
 * pattern independent of escape syntax) and U+1160–U+11FF. Built once, from one regex
 * pass over all code points (≈ 20 ms), not 1.1 million single-character tests.
 */
export function continuationClass(): string {
  if (marksClass !== null) return marksClass;
  const ranges: [number, number][] = [[0x1160, 0x11ff]];
  // Every code point from U+0300 (no mark below it) to the last plane with marks, minus
  // surrogates; chunked so no single string is huge.
  for (let base = 0x300; base <= 0xe01ef; base += 0x10000) {
    let s = "";
    const top = Math.min(base + 0x10000, 0xe01f0);
    for (let c = base; c < top; c++) {
      if (c >= 0xd800 && c <= 0xdfff) continue;
      s += String.fromCodePoint(c);
    }
    for (const m of s.matchAll(/\p{M}+/gu)) {
      const cps = [...m[0]];
      ranges.push([cps[0]!.codePointAt(0)!, cps.at(-1)!.codePointAt(0)!]);
    }
  }
  ranges.sort((a, b) => a[0] - b[0]);
  const merged: [number, number][] = [];
  for (const r of ranges) {
    const last = merged.at(-1);
    if (last && r[0] <= last[1] + 1) last[1] = Math.max(last[1], r[1]);
    else merged.push([r[0], r[1]]);
  }
  const ch = (c: number) => String.fromCodePoint(c);
  marksClass = "[" +
    merged.map(([a, b]) => a === b ? ch(a) : `${ch(a)}-${ch(b)}`).join("") + "]";
  return marksClass;
}

/** ARE pattern: `needle` (literal) not followed by a unit that continues a character. */
export function boundaryRegex(needle: string): string {
  return `${needle.replace(ARE_SPECIAL, (c) => `\\${c}`)}(?!${continuationClass()})`;
}

/**
 * True when pg_trgm can extract a trigram from `needle` as a LIKE pattern, so the GIN
 * index narrows the scan: a run of three word characters (letters/digits — CJK included
 * under a UTF-8 LC_CTYPE). A needle without one makes the index return every row.
 */
export function hasTrigram(needle: string): boolean {
  return /[\p{L}\p{N}]{3}/u.test(needle);
}

/** What the record-level conditions read (from a NormalizedRequest plus the team bits). */
export interface RecordFilter {
  needles: readonly string[];
  roleMask: number;
  sources: ReadonlySet<Source> | null;
  machines: readonly string[] | null;
  /** Inclusive ts bounds, the retention cutoff folded into `from`; null = unbounded. */
  from: number | null;
  to: number | null;
  includeSuperseded: boolean;
  /** Folded project substring, or null. */
  project: string | null;
  /**
   * A cursor page: only rows published as of its team revision — per machine, rows with
   * rev_added ≤ that machine's revision then (team_search.ts asOfVector). Null on a first
   * page: its transaction's snapshot IS "as of" the revision it read.
   */
  asOf: { machines: readonly string[]; revs: readonly number[] } | null;
}

/**
 * The WHERE conditions (ANDed, no leading AND) selecting the matching records of alias
 * `r`: every needle (LIKE, plus the boundary recheck on has_marks rows) and every filter.
 */
export function recordConditions(f: RecordFilter, p: SqlParams, r = "r"): string {
  const c: string[] = [];
  if (f.asOf) {
    // A machine absent from the vector had published nothing then: none of its rows.
    const arms = f.asOf.machines.map((m, i) =>
      `WHEN ${p.add(m)} THEN ${p.add(f.asOf!.revs[i]!)}::bigint`
    ).join(" ");
    c.push(arms ? `${r}.rev_added <= CASE ${r}.machine ${arms} ELSE -1 END` : "false");
  }
  for (const n of f.needles) {
    c.push(`${r}.folded LIKE ${p.add(likeContains(n))}`);
    c.push(`(NOT ${r}.has_marks OR ${r}.folded ~ ${p.add(boundaryRegex(n))})`);
  }
  if (!f.includeSuperseded) c.push(`NOT ${r}.superseded`);
  const both = ROLE_USER | ROLE_ASSISTANT;
  if ((f.roleMask & both) !== both) {
    c.push(`${r}.role = ${p.add(f.roleMask & ROLE_USER ? 1 : 2)}`);
  }
  if (f.sources) c.push(`${r}.source = ANY(${p.add([...f.sources])}::text[])`);
  if (f.machines) c.push(`${r}.machine = ANY(${p.add([...f.machines])}::text[])`);
  if (f.from !== null) c.push(`${r}.ts_ms >= ${p.add(f.from)}`);
  if (f.to !== null) c.push(`${r}.ts_ms <= ${p.add(f.to)}`);
  if (f.project !== null) {
    c.push(
      `(${r}.machine, ${r}.session_key) IN (SELECT machine, session_key FROM intendant.sessions ` +
        `WHERE project_folded LIKE ${
          p.add(likeContains(f.project.replaceAll("\u0000", "\uFFFD")))
        })`,
    );
  }
  return c.join(" AND ");
}

/**
 * The session-level conditions of alias `s` the newest-first walk can apply before
 * reading any record: machine, source, project, time bounds.
 */
export function sessionConditions(f: RecordFilter, p: SqlParams, s = "s"): string {
  // No revision here: a session published after a cursor's revision is walked, and its
  // records (recordConditions) are not counted.
  const c: string[] = ["true"];
  if (f.sources) c.push(`${s}.source = ANY(${p.add([...f.sources])}::text[])`);
  if (f.machines) c.push(`${s}.machine = ANY(${p.add([...f.machines])}::text[])`);
  if (f.from !== null) c.push(`${s}.newest_ts_ms >= ${p.add(f.from)}`);
  if (f.to !== null) c.push(`${s}.oldest_ts_ms <= ${p.add(f.to)}`);
  if (f.project !== null) {
    c.push(
      `${s}.project_folded LIKE ${p.add(likeContains(f.project.replaceAll("\u0000", "\uFFFD")))}`,
    );
  }
  return c.join(" AND ");
}
