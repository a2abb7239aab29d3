/**
 * Re-deriving one session of a snapshot store (SQLite: OpenCode, Goose) against what was
 * published before. A database is not append-only: rows are updated in place (streamed
 * text grows), hidden by a pointer (OpenCode `session.revert`), or deleted and
 * re-inserted (Goose `replace_conversation`). So every change re-reads the whole session
 * and this module turns "the prose the session holds now" into a shard update.
 *
 * Rules (the `seen` list in the unit's state remembers, per record id, the hash of the
 * text published last, whether it is superseded, and whether it vanished):
 * - first read, or every id published before is still present: a "replace" with exactly
 *   the current records (clean: in-place growth leaves no stale copy behind), superseded
 *   ones marked by one `record_ids` mark;
 * - otherwise (a row vanished): an "append" that keeps what the shard holds — vanished
 *   text stays, superseded (policy, formats-more §6.5/§7.5: never lose what was said),
 *   changed text is appended anew and its old copy superseded, a newly hidden record is
 *   superseded, an un-hidden one is appended again (marks can only supersede; a fresh
 *   copy after the mark is active). Once the shard holds more than one copy per id (or
 *   a vanished one) it stays in this mode, so no published text is dropped by a later
 *   replace.
 * Invariants: record ids are the source's stable ids; equal input → equal output; a
 * record's text is capped (record.ts capText) but hashed over the full text.
 */
import { hash16Of, type Locator } from "../../locator.ts";
import { capText, type MessageRecord, type Source, type SupersessionMark } from "../../record.ts";

/** One prose record as the source derived it from the snapshot. */
export interface DerivedRecord {
  /** Stable id (OpenCode part id, Goose message_id or ordinal + hash). */
  id: string;
  role: "user" | "assistant";
  ts_ms: number;
  text: string;
  locator: Locator;
  subagent: boolean;
  /** Hidden by the format's own rewind pointer. */
  superseded: boolean;
}

/** `[id, hash16 of the full text, superseded 0|1, vanished 0|1]` */
export type SeenEntry = [string, string, 0 | 1, 0 | 1];

/** What {@link rederiveSession} publishes. */
export interface Rederived {
  kind: "replace" | "append";
  records: MessageRecord[];
  marks: SupersessionMark[];
  seen: SeenEntry[];
  /** Records appended / rows vanished this time (tests, coverage). */
  vanished: number;
}

/** Input of {@link rederiveSession}. */
export interface RederiveInput {
  source: Source;
  sessionId: string;
  current: readonly DerivedRecord[];
  /** The prior shard's record count (null: no shard yet). */
  priorRecords: number | null;
  /** The prior state's seen list (null: none usable → replace). */
  priorSeen: readonly SeenEntry[] | null;
}

function toRecord(
  d: DerivedRecord,
  order: number,
  source: Source,
  sessionId: string,
): MessageRecord {
  const { text, truncated } = capText(d.text);
  return {
    id: d.id,
    source,
    session_id: sessionId,
    role: d.role,
    ts_ms: d.ts_ms,
    text,
    truncated,
    locator: d.locator,
    order,
    generation: 0,
    subagent: d.subagent,
  };
}

/** The update for one session (see the header for the rules). */
export function rederiveSession(input: RederiveInput): Rederived {
  const { source, sessionId, current, priorRecords, priorSeen } = input;
  const hashes = current.map((d) => hash16Of(d.text));
  const prior = new Map<string, SeenEntry>();
  for (const e of priorSeen ?? []) prior.set(e[0], e);
  const ids = new Set(current.map((d) => d.id));
  // Lossless only while the shard holds exactly one copy per remembered id (a replace
  // shard does) and every one is still present: then the replace drops no text but the
  // older versions of rows edited in place.
  const lossless = priorRecords === null || priorSeen === null ||
    (priorRecords === prior.size && [...prior.values()].every((e) => e[3] === 0 && ids.has(e[0])));
  if (lossless) {
    const records = current.map((d, i) => toRecord(d, i, source, sessionId));
    const hidden = current.filter((d) => d.superseded).map((d) => d.id);
    return {
      kind: "replace",
      records,
      marks: hidden.length > 0
        ? [{ kind: "record_ids", after_order: records.length, ids: hidden }]
        : [],
      seen: current.map((d, i) => [d.id, hashes[i]!, d.superseded ? 1 : 0, 0]),
      vanished: 0,
    };
  }
  const base = priorRecords;
  const appended: DerivedRecord[] = [];
  const killOld: string[] = [];
  const bornHidden: string[] = [];
  const next = new Map(prior);
  current.forEach((d, i) => {
    const h = hashes[i]!;
    const p = prior.get(d.id);
    const sup: 0 | 1 = d.superseded ? 1 : 0;
    if (p && p[1] === h && p[3] === 0) {
      if (p[2] === sup) return;
      if (sup === 1) killOld.push(d.id);
      else appended.push(d); // Un-hidden: a fresh copy after the old mark is active.
    } else {
      // New, changed in place, or back after vanishing: append; the old copy dies.
      if (p && p[2] === 0 && p[3] === 0) killOld.push(d.id);
      appended.push(d);
      if (sup === 1) bornHidden.push(d.id);
    }
    next.set(d.id, [d.id, h, sup, 0]);
  });
  let vanished = 0;
  for (const [id, e] of prior) {
    if (ids.has(id) || e[3] === 1) continue;
    // Gone from the store: keep the published text, superseded (policy).
    if (e[2] === 0) killOld.push(id);
    next.set(id, [id, e[1], 1, 1]);
    vanished++;
  }
  const records = appended.map((d, i) => toRecord(d, base + i, source, sessionId));
  const marks: SupersessionMark[] = [];
  if (killOld.length > 0) marks.push({ kind: "record_ids", after_order: base, ids: killOld });
  if (bornHidden.length > 0) {
    marks.push({ kind: "record_ids", after_order: base + records.length, ids: bornHidden });
  }
  return { kind: "append", records, marks, seen: [...next.values()], vanished };
}

/** Whether `v` is a usable seen list (state written by this module). */
export function isSeenList(v: unknown): v is SeenEntry[] {
  return Array.isArray(v) &&
    v.every((e) =>
      Array.isArray(e) && e.length === 4 && typeof e[0] === "string" &&
      typeof e[1] === "string" && (e[2] === 0 || e[2] === 1) && (e[3] === 0 || e[3] === 1)
    );
}
