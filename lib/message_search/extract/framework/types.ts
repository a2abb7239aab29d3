/**
 * The extractor seam: one interface for every source. An extractor discovers session
 * units under the roots it is given (paths only: hermetic, never the environment) and
 * turns one unit into records + marks, incrementally when its cursors allow. Malformed
 * input is data: counted per reason in `skipped`, never thrown, never fatal to a sweep.
 */
import type { FileCursor } from "../../cursor_types.ts";
import type { MessageRecord, Source, SupersessionMark } from "../../record.ts";
import type { EntryMeta } from "../../store/types.ts";

/** One session as the indexer sees it: the files it is read from. */
export interface SessionUnit {
  source: Source;
  sessionId: string;
  /** `<source>:<session_id>` */
  key: string;
  /** Cursor-tracked files; the first is the session's main file. */
  files: { path: string; role: string }[];
  /** Extractor-private discovery facts (e.g. the session directory). */
  hint?: Record<string, unknown>;
}

/** What the store remembers of a unit from the last publish. */
export interface PriorShard {
  generations: string[];
  cursors: Record<string, FileCursor>;
  state: unknown;
  /** Records in the shard so far (= the next record's `order`). */
  records: number;
}

/** New content for the shard. */
export interface ShardContent {
  kind: "replace" | "append";
  records: MessageRecord[];
  marks: SupersessionMark[];
  cursors: Record<string, FileCursor>;
  state: unknown;
  meta: EntryMeta;
  skipped: Record<string, number>;
}

/** What one extract call concluded. */
export type ExtractOutcome =
  | { kind: "unchanged" }
  | { kind: "gone" }
  /** Publishes nothing (wrapper session, nothing said yet); remembered in process only. */
  | { kind: "nothing"; reason: string; cursors: Record<string, FileCursor> }
  | ShardContent;

/** Context every extract call gets. */
export interface ExtractContext {
  now: number;
}

/** Discovery result. */
export interface Discovery {
  units: SessionUnit[];
  /** Entries refused during discovery, by reason (e.g. ".bak sibling", "not a regular file"). */
  skipped: Record<string, number>;
  /**
   * Files whose sessions could not be listed this sweep (a database kept busy, empty,
   * corrupt, hostile): every session published from one of them is kept as it is — not
   * reported gone — until the file lists again.
   */
  held?: string[];
  /** What was skipped, named (a file and why): shown with the source's coverage. */
  notes?: string[];
}

/** One source's extractor. */
export interface Extractor {
  readonly source: Source;
  discover(): Promise<Discovery>;
  extract(
    unit: SessionUnit,
    prior: PriorShard | null,
    ctx: ExtractContext,
  ): Promise<ExtractOutcome>;
}

/** Adds `n` to `counts[reason]`. */
export function countSkip(counts: Record<string, number>, reason: string, n = 1): void {
  counts[reason] = (counts[reason] ?? 0) + n;
}
