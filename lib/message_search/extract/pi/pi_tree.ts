/**
 * Pi's entry tree → records + supersession marks, in a full pass or as an exact append.
 *
 * Tree rules (FORMAT.md §3, [src] pi-mono session-manager.ts `_buildIndex`,
 * `getBranch`, `buildSessionContext`): the active leaf is the LAST parsed entry in the
 * file (malformed lines never become the leaf, as in Pi's loader); the active path is the
 * leaf's parentId chain, looked up through an id → entry map where a later duplicate id
 * wins (Pi's `byId.set`). Prose off that path (a sibling branch left by an edit or /tree,
 * or an earlier root left by resetLeaf) is superseded by ONE `record_ids` mark placed
 * after every record, so it stays searchable. Compaction moves nothing off the path, so
 * compacted-away prose stays active.
 *
 * Incremental rule: an increment is applied without re-reading only when each new entry's
 * parentId is the previous leaf (the chain just grows; Pi appends every entry as a child
 * of the leaf, so this is the steady state). Then no earlier entry changes side and every
 * new record is active, so the result equals a full pass (records, ids, active flags).
 * Anything else (a new branch, a new root, an oversized line, the entry bound) returns
 * null and the caller re-parses the file in full. State stays O(1): the leaf id, counts,
 * header facts and the title inputs.
 * Ids: record id = entry id; a duplicate entry id in a full pass (never minted by Pi, which
 * collision-checks ids) gets `<id>@<line>` so ids stay unique. The append path checks new
 * ids only against the leaf; a hand-made duplicate of an older id is caught by the next
 * full pass.
 */
import { lineText } from "../../../durable/mod.ts";
import type { Increment } from "../../cursor.ts";
import { hash16Of } from "../../locator.ts";
import { capText, type MessageRecord, type SupersessionMark } from "../../record.ts";
import { parseEntry, type PiEntry, titleFrom } from "./pi_entries.ts";

/** Persisted carry-over between sweeps (small and bounded). */
export interface PiState {
  v: 1;
  /** Id of the last parsed entry: the active leaf (null before the first entry). */
  leaf: string | null;
  /** Entries consumed so far (for the entry bound). */
  entries: number;
  version: number;
  cwd: string | null;
  /** The parent session's id (forks), when it could be read. */
  parent: string | null;
  /** Last non-empty session_info name, in file order (Pi's getSessionName). */
  name: string | null;
  /** First user prose in file order, cut for a title. */
  first_user: string | null;
  /** Why the file was published empty (fail-closed), or null. */
  failed: string | null;
}

/** Narrows a persisted state; anything else means "no usable state" (full parse). */
export function isPiState(v: unknown): v is PiState {
  if (typeof v !== "object" || v === null) return false;
  const s = v as Record<string, unknown>;
  const strOrNull = (x: unknown) => x === null || typeof x === "string";
  return s.v === 1 && typeof s.entries === "number" && typeof s.version === "number" &&
    strOrNull(s.leaf) && strOrNull(s.cwd) && strOrNull(s.parent) && strOrNull(s.name) &&
    strOrNull(s.first_user) && strOrNull(s.failed);
}

/** Fixed facts of one pass. */
export interface PassContext {
  sessionId: string;
  /** Locator `file`: the path relative to the agent dir. */
  file: string;
  maxEntries: number;
}

/** What a pass produced. */
export interface PassResult {
  records: MessageRecord[];
  marks: SupersessionMark[];
  state: PiState;
  skipped: Record<string, number>;
}

type ProseEntry = PiEntry & { prose: NonNullable<PiEntry["prose"]> };

function toRecord(ctx: PassContext, e: ProseEntry, id: string, order: number): MessageRecord {
  const capped = capText(e.prose.text);
  return {
    id,
    source: "pi",
    session_id: ctx.sessionId,
    role: e.prose.role,
    ts_ms: e.prose.ts_ms,
    text: capped.text,
    truncated: capped.truncated,
    locator: {
      v: 1,
      kind: "external_record_id",
      record_id: e.id,
      file: ctx.file,
      hash: hash16Of(capped.text),
    },
    order,
    generation: 0,
    subagent: false,
  };
}

/** Folds one entry into the title inputs and the leaf. */
function note(state: PiState, e: PiEntry): void {
  state.leaf = e.id;
  state.entries++;
  if (e.name !== null) state.name = e.name;
  if (state.first_user === null && e.prose?.role === "user") {
    state.first_user = titleFrom(e.prose.text);
  }
}

/**
 * Parses every entry after the header (line 1) and derives records and the one mark.
 * Returns `failed` when the entry bound is exceeded (nothing partial is published).
 */
export function fullPass(
  inc: Increment,
  base: Pick<PiState, "version" | "cwd" | "parent">,
  ctx: PassContext,
): PassResult | { failed: string; skipped: Record<string, number> } {
  const skipped: Record<string, number> = {};
  const state: PiState = {
    v: 1,
    ...base,
    leaf: null,
    entries: 0,
    name: null,
    first_user: null,
    failed: null,
  };
  const entries: PiEntry[] = [];
  for (const span of inc.lines) {
    if (span.lineNo === 1) continue; // The header, validated by the caller.
    const e = parseEntry(
      lineText(inc.bytes, span, inc.baseOffset),
      span.lineNo,
      base.version,
      skipped,
    );
    if (e === null) continue;
    if (entries.length >= ctx.maxEntries) return { failed: "too_many_entries", skipped };
    entries.push(e);
    note(state, e);
  }
  const onPath = activePath(entries);
  const records: MessageRecord[] = [];
  const superseded: string[] = [];
  const used = new Set<string>();
  entries.forEach((e, i) => {
    if (e.prose === null) return;
    const id = used.has(e.id) ? `${e.id}@${e.line}` : e.id;
    used.add(id);
    records.push(toRecord(ctx, e as ProseEntry, id, records.length));
    if (!onPath[i]) superseded.push(id);
  });
  const marks: SupersessionMark[] = superseded.length > 0
    ? [{ kind: "record_ids", after_order: records.length, ids: superseded }]
    : [];
  return { records, marks, state, skipped };
}

/** Flags the entries on the last entry's parent chain (cycle-safe). */
function activePath(entries: readonly PiEntry[]): Uint8Array {
  const byId = new Map<string, number>();
  entries.forEach((e, i) => byId.set(e.id, i));
  const on = new Uint8Array(entries.length);
  let cur = entries.length - 1;
  // A visited entry ends the walk: a cycle (never written by Pi) cannot loop forever.
  while (cur >= 0 && on[cur] === 0) {
    on[cur] = 1;
    const p = entries[cur]!.parentId;
    cur = p === null ? -1 : byId.get(p) ?? -1;
  }
  return on;
}

/**
 * Applies an increment that only extends the active chain; null when it does anything
 * else (the caller then re-parses in full).
 */
export function appendPass(
  inc: Increment,
  prior: PiState,
  nextOrder: number,
  ctx: PassContext,
): PassResult | null {
  if (inc.oversizedLines.length > 0) return null; // A bound blew: the full pass fails closed.
  const skipped: Record<string, number> = {};
  const state: PiState = { ...prior };
  const records: MessageRecord[] = [];
  for (const span of inc.lines) {
    const e = parseEntry(
      lineText(inc.bytes, span, inc.baseOffset),
      span.lineNo,
      state.version,
      skipped,
    );
    if (e === null) continue;
    if (e.parentId !== state.leaf || e.id === state.leaf) return null;
    if (state.entries >= ctx.maxEntries) return null;
    note(state, e);
    if (e.prose !== null) {
      records.push(toRecord(ctx, e as ProseEntry, e.id, nextOrder + records.length));
    }
  }
  return { records, marks: [], state, skipped };
}
