/**
 * An external session's detail model. Its skeleton is the shard: every segment's records
 * in source order with superseded flags from deriveActive, and one `cut` row per
 * supersession mark placed where it was written (after the `after_order` records that
 * existed then). Generations are content-named and immutable, so the segments named by
 * one manifest read form a consistent snapshot; a generation collected between the
 * manifest read and the load is retried once against a fresh manifest. On top, the
 * session's tool calls and context markers are read from its source files through the
 * contained reader (activity/attach.ts): calls hang on the records of their turn, and
 * `tool_calls` / `context_snapshot` rows are added between records — record order,
 * flags and locators are untouched; `activity` says whether the source files were read.
 * A damaged shard (F8) is never shown in part: a generation that is still missing or
 * corrupt after the retry is reported to `onDamage` (the daemon quarantines and re-derives
 * it at once) and, like a shard already quarantined, answers DamagedSessionError — the
 * edge's 503 "being rebuilt", or 410 when its sources are gone and it cannot be rebuilt.
 */
import { NotFoundError } from "../errors.ts";
import {
  capText,
  CorruptGenerationError,
  decodeRecords,
  deriveActive,
  type ManifestEntry,
  type MessageRecord,
  type ShardDamage,
  type Store,
  type SupersessionMark,
} from "../message_search/mod.ts";
import { attachActivity } from "./activity/attach.ts";
import { activityEntry } from "./activity/entry.ts";
import type { ActivityRow } from "./activity/types.ts";
import {
  type ActivityStatus,
  type DetailEntry,
  ENTRY_TEXT_CAP_BYTES,
  type KeptCopy,
  type ToolCallEntry,
} from "./types.ts";

/** One row: a record (with its derived active flag and its turn's tools), a mark, or activity. */
export type ExternalRow =
  | { kind: "record"; rec: MessageRecord; active: boolean; tools?: ToolCallEntry[] }
  | { kind: "cut"; mark: SupersessionMark }
  | ActivityRow;

/** What the detail view and jump-to-hit need from one external session. */
export interface ExternalModel {
  entry: ManifestEntry;
  rows: ExternalRow[];
  /** How reading the source files for tool calls went (set by attachActivity). */
  activity?: ActivityStatus;
}

/**
 * An external session whose index shard is damaged: quarantined, or a generation failed to
 * load. `reason` rebuilding: the next sweep re-derives it; source_gone: it cannot be.
 */
export class DamagedSessionError extends Error {
  readonly key: string;
  readonly reason: "rebuilding" | "source_gone";
  constructor(key: string, reason: "rebuilding" | "source_gone", options?: ErrorOptions) {
    super(
      reason === "source_gone"
        ? `Session "${key}" cannot be shown: its index data was damaged and its source files are gone`
        : `Session "${key}" cannot be shown right now: its index data was damaged and is being rebuilt; try again in a moment`,
      options,
    );
    this.name = "DamagedSessionError";
    this.key = key;
    this.reason = reason;
  }
}

/** Options for {@link loadExternal}. */
export interface LoadExternalOptions {
  /** Told of a generation found damaged (the daemon: Indexer.reportDamage). */
  onDamage?: (found: readonly ShardDamage[]) => void;
  /** The vault's copies, read for a gone session (CatalogDeps.keptCopy). */
  keptCopy?: KeptCopy;
}

type Loaded = ExternalModel | { entry: ManifestEntry; failed: string; cause: Error };

async function loadOnce(store: Store, key: string): Promise<Loaded> {
  const m = await store.readManifest();
  const entry = Object.hasOwn(m.sessions, key) ? m.sessions[key] : undefined;
  if (!entry) throw new NotFoundError(`No session "${key}"`);
  if (entry.quarantined_at_ms !== undefined) {
    throw new DamagedSessionError(key, entry.source_gone ? "source_gone" : "rebuilding");
  }
  const records: MessageRecord[] = [];
  const marks: SupersessionMark[] = [];
  for (const g of entry.generations) {
    let seg;
    let recs: MessageRecord[];
    try {
      seg = await store.loadSegment(g);
      recs = decodeRecords(seg);
    } catch (err) {
      if (!(err instanceof CorruptGenerationError || err instanceof NotFoundError)) throw err;
      return { entry, failed: g, cause: err };
    }
    // Loops, not push(...xs): a spread of 100k+ records overflows the call stack.
    for (const r of recs) records.push(r);
    for (const k of seg.marks) marks.push(k);
  }
  records.sort((a, b) => a.order - b.order);
  const active = deriveActive(records, marks);
  const sorted = [...marks].sort((a, b) => a.after_order - b.after_order);
  const rows: ExternalRow[] = [];
  let k = 0;
  records.forEach((rec, i) => {
    while (k < sorted.length && sorted[k]!.after_order <= rec.order) {
      rows.push({ kind: "cut", mark: sorted[k++]! });
    }
    rows.push({ kind: "record", rec, active: active[i]! });
  });
  while (k < sorted.length) rows.push({ kind: "cut", mark: sorted[k++]! });
  return { entry, rows };
}

/**
 * Loads the model of the external session `key` (NotFoundError when not in the index,
 * DamagedSessionError when its shard is damaged).
 */
export async function loadExternal(
  store: Store,
  key: string,
  o: LoadExternalOptions = {},
): Promise<ExternalModel> {
  // A generation GC'd between our manifest read and its load (a newer manifest names the
  // shard's current generations), or re-derived meanwhile: one retry on a fresh read.
  let m = await loadOnce(store, key);
  if ("failed" in m) m = await loadOnce(store, key);
  if ("failed" in m) {
    o.onDamage?.([{ key, generation: m.failed }]);
    const reason = m.entry.source_gone ? "source_gone" : "rebuilding";
    throw new DamagedSessionError(key, reason, { cause: m.cause });
  }
  return await attachActivity(m, { keptCopy: o.keptCopy });
}

/** Turns rows [offset, offset + n) into entries. */
export function externalEntries(rows: readonly ExternalRow[], offset: number): DetailEntry[] {
  return rows.map((r, i): DetailEntry => {
    if (r.kind === "cut") {
      return { index: offset + i, kind: "cut", ts_ms: null, detail: { ...r.mark } };
    }
    if (r.kind !== "record") return activityEntry(r, offset + i);
    const { rec } = r;
    const c = capText(rec.text, ENTRY_TEXT_CAP_BYTES);
    const detail: Record<string, unknown> = {
      file: rec.locator.kind === "external_record_id" || rec.locator.kind === "external_line"
        ? rec.locator.file
        : undefined,
      generation: rec.generation,
      record_truncated: rec.truncated,
    };
    if (c.truncated) detail.text_truncated = true;
    if (rec.seq !== undefined) detail.seq = rec.seq;
    if (rec.user_turn !== undefined) detail.user_turn = rec.user_turn;
    const e: DetailEntry = {
      index: offset + i,
      kind: "message",
      ts_ms: rec.ts_ms,
      role: rec.role,
      text: c.text,
      superseded: !r.active,
      subagent: rec.subagent,
      record_id: rec.id,
      detail,
    };
    if (rec.locator.kind === "external_line") e.line = rec.locator.line;
    if (r.tools) e.tools = r.tools;
    return e;
  });
}
