/**
 * The row index of one native session.jsonl: what the detail view, jump-to-hit and replay
 * need to page the spine WITHOUT holding it. Per parsed event: its byte offset and length
 * and its line number; per detail row: the event it renders, its kind, how it was derived
 * (variant), flags, time, seq, tool-call group and a 32-bit hash of its shown text; plus
 * the tool-call, tool-group and approval tables that grouping needs. All numbers in typed
 * columns (spine_columns.ts): a row costs ~31 bytes, an event 12, whatever the text.
 * A page re-reads its rows' lines (and their tool events' lines) and derives the rows
 * from them (native_page.ts), exactly as native_rows.ts would have built them.
 *
 * Invariants: rows are in event order (row i's event ordinal ≤ row i+1's); `hidden` holds
 * the physical rows an approval later folded (sorted), which are not shown: visible index
 * v ↔ physical index p skip them. The builder (spine_index_build.ts) only ever appends,
 * hides, and sets seqs; the cache (spine_cache.ts) serializes those writes against readers.
 */
import { type Column, f64, i32, u32, u8 } from "./spine_columns.ts";

/** Row kinds, by code. */
export const ROW_KINDS = [
  "message",
  "question",
  "answer",
  "approval",
  "context_snapshot",
  "cut",
  "error",
  "warning",
  "session_end",
  "session_start",
  "steer",
  "tool_calls",
] as const;
export const KIND: Record<string, number> = Object.fromEntries(ROW_KINDS.map((k, i) => [k, i]));
export const KIND_MESSAGE = 0;

/** How a row is derived from its event (native_rows.ts's branches). */
export const VARIANT = {
  plain: 0,
  user: 1,
  assistant: 2,
  sessionStart: 3,
  task: 4,
  steer: 5,
  steerDelivered: 6,
  followUp: 7,
  toolCalls: 8,
} as const;

/** Row flags. */
export const FLAG = {
  user: 1,
  assistant: 2,
  tsInferred: 4,
  hasText: 8,
  /** A legacy task row of the FIRST session_started (the meta's task may stand in). */
  firstStarted: 16,
} as const;

/** FNV-1a over UTF-16 code units: a cheap filter before an exact comparison. */
export function textHash(s: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 0x01000193);
  return h >>> 0;
}

/** The index. Fields are public to the builder and the page deriver (same folder). */
export class SpineIndex {
  // Events: every complete line that parsed as a LogEvent.
  readonly evOff = u32();
  readonly evLen = u32();
  readonly evLine = u32();
  // Rows (physical).
  readonly rowEv = u32();
  readonly rowKind = u8();
  readonly rowVariant = u8();
  readonly rowFlags = u8();
  /** NaN: null. */
  readonly rowTs = f64();
  /** NaN: no seq (see also corrSeq). */
  readonly rowSeq = f64();
  /** Tool group owned by the row, or -1. */
  readonly rowGroup = i32();
  readonly rowHash = u32();
  // Tool calls (linked per group).
  readonly callNext = i32();
  readonly callStart = i32();
  readonly callFinish = i32();
  readonly callTs = f64();
  readonly callApproval = i32();
  // Tool groups.
  readonly groupRow = u32();
  readonly groupFirst = i32();
  readonly groupLast = i32();
  readonly groupBatch = i32();
  readonly groupBatchTs = f64();
  readonly groupOutput = i32();
  readonly groupOutputTs = f64();
  // Approvals: a linked list of their events (event ordinal) per approval.
  readonly apprHead = i32();
  readonly apprTail = i32();
  readonly apprEv = u32();
  readonly apprNext = i32();
  // conversation_message events with a numeric message_seq (jump-to-hit).
  readonly canonEv = u32();
  readonly canonSeq = f64();
  /** Physical rows folded away by a later command_started (sorted). */
  readonly hidden: number[] = [];
  /** Cut rows (any), and those with a numeric cut_after_seq, in row order. */
  cutRows = 0;
  readonly cuts: { row: number; after: number }[] = [];
  /** Legacy steer_delivered rows → the steer_requested event holding their text. */
  readonly steerRef = new Map<number, number>();
  /** Seqs the epoch marker's mapping gave legacy rows (correlateLegacy). */
  corrSeq = new Map<number, unknown>();
  /** Complete lines in the indexed bytes. */
  lineCount = 0;
  /** Bytes indexed: the end of the last complete line read. */
  indexed = 0;
  /** Why indexing stopped early ("bytes": SPINE_MAX_BYTES; "entries": the entry caps). */
  stopped: "bytes" | "entries" | null = null;
  messageCount = 0;
  parent: string | null = null;
  provider: string | null = null;
  model: string | null = null;
  autonomy: string | null = null;
  /** Ordinal of the first session_started, or -1. */
  firstStarted = -1;
  /** Ordinal of the first conversation_message_epoch, or -1. */
  epochEv = -1;
  /** Lines skipped: not JSON, not a LogEvent, longer than DETAIL_LINE_MAX_BYTES. */
  skipped = 0;

  get events(): number {
    return this.evOff.length;
  }

  get physicalRows(): number {
    return this.rowEv.length;
  }

  /** Rows shown (hidden approvals excluded; the log_truncated row is the caller's). */
  get visibleRows(): number {
    return this.rowEv.length - this.hidden.length;
  }

  /** Physical index of visible row `v`. */
  physOf(v: number): number {
    const h = this.hidden;
    // Hidden k has (h[k] - k) visible rows before it; count those at or before v.
    let lo = 0, hi = h.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (h[mid]! - mid <= v) lo = mid + 1;
      else hi = mid;
    }
    return v + lo;
  }

  /** Visible index of physical row `p` (which must not be hidden). */
  visOf(p: number): number {
    return p - lowerBound(this.hidden, p);
  }

  isHidden(p: number): boolean {
    const i = lowerBound(this.hidden, p);
    return this.hidden[i] === p;
  }

  /** Hides physical row `p`. */
  hide(p: number): void {
    const i = lowerBound(this.hidden, p);
    if (this.hidden[i] !== p) this.hidden.splice(i, 0, p);
  }

  /** The ordinal of the event on line `line`, or -1. */
  eventAtLine(line: number): number {
    let lo = 0, hi = this.events;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (this.evLine.at(mid) < line) lo = mid + 1;
      else hi = mid;
    }
    return lo < this.events && this.evLine.at(lo) === line ? lo : -1;
  }

  /** The first physical row whose event is at or after ordinal `ev`. */
  firstRowFromEvent(ev: number): number {
    let lo = 0, hi = this.physicalRows;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (this.rowEv.at(mid) < ev) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  /** Line number of physical row `p`. */
  lineOf(p: number): number {
    return this.evLine.at(this.rowEv.at(p));
  }

  /** Estimated bytes held. */
  get bytes(): number {
    let n = 0;
    for (const v of Object.values(this)) {
      if (v && typeof v === "object" && "bytes" in v && typeof v.bytes === "number") n += v.bytes;
    }
    n += this.hidden.length * 8 + this.cuts.length * 48 + (this.steerRef.size +
          this.corrSeq.size) * 40;
    return n + 1024;
  }

  /** Gives every column's slack back (after a build or an extension). */
  trim(): void {
    for (const v of Object.values(this)) {
      if (v && typeof v === "object" && "trim" in v && typeof v.trim === "function") {
        (v as Column<Uint8Array>).trim();
      }
    }
  }
}

/** First index of sorted `a` whose value is ≥ `x`. */
function lowerBound(a: readonly number[], x: number): number {
  let lo = 0, hi = a.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (a[mid]! < x) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}
