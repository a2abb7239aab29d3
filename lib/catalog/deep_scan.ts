/**
 * Deep Search over one opened file: streamed in READ_CHUNK_BYTES reads from a resume
 * position and split into lines; a run of lines whose folded text holds no match is
 * skipped in one step. Every line is matched in HIT_WINDOW_BYTES windows counted from
 * its start (nearly every line is one window), one hit per window. Windows overlap by
 * more than any match can span and report only matches starting before the overlap, so
 * nothing is missed or reported twice. A window is matched only once its bytes are all
 * read (or the line ended), and window starts depend only on the line, never on where
 * a read or a budget fell: every page boundary yields exactly the hits of one big scan.
 * The scan stops at the hit limit or when the byte budget is spent and says where to
 * resume: a line start, or (`mid`) a window start inside a line. Each request can
 * complete at least one window (the minimum budget exceeds a window plus its overlap),
 * so paging always progresses. Only bytes present when the file was opened are read.
 * The time budget (`deadline`) stops like the byte budget, but only once a request has
 * read DEEP_MIN_MAX_BYTES, so a slow disk still progresses every page.
 * The file is anything with a size and positioned reads: a contained open (native and
 * agent files), a decompressed rollout, a vault version (deep_open.ts).
 */
import { maskSnippet, matchPiece, maxMatchBytes, mayMatch } from "./deep_match.ts";
import type { DeepHit } from "./types.ts";
import { concatBytes } from "../text/mod.ts";

/** Bytes per read. */
export const READ_CHUNK_BYTES = 1024 * 1024;
/** Window of a line: one hit per window (deep_search's minimum budget must exceed it). */
export const HIT_WINDOW_BYTES = 32 * 1024;

/** Where a scan starts or stopped. */
export interface ScanPos {
  offset: number;
  /** 1-based number of the line `offset` is in. */
  line: number;
  /** `offset` is inside a line (a window start), not at its beginning. */
  mid: boolean;
}

/** Shared request budget. */
export interface ScanBudget {
  maxBytes: number;
  scanned: number;
  limit: number;
  hits: DeepHit[];
  /** Epoch ms after which the scan stops (once it read `minBytes`). @default Infinity */
  deadline?: number;
  /** Bytes a page reads before the deadline may stop it. */
  minBytes?: number;
  /** @default Date.now */
  now?: () => number;
}

/** Why a scan stopped before the end. */
export type StopReason = "hits" | "bytes" | "time";

/** How a file scan ended. */
export type ScanEnd = { done: true } | { done: false; pos: ScanPos; reason: StopReason };

/** What deep scan reads: a size and positioned reads of the bytes present at open. */
export interface ScanFile {
  readonly size: number;
  read(offset: number, length: number): Promise<Uint8Array>;
}

/** Where a file's hits are reported. */
export interface ScanPlace {
  key: string;
  source: DeepHit["source"];
  sessionId: string;
  /** The name hits carry (native: relative; external: the agent's path). */
  file: string;
  /** Hits give lines (JSONL) rather than byte offsets. */
  jsonl: boolean;
  from?: "vault";
}

/** True when the time budget says stop. */
function timeUp(b: ScanBudget): boolean {
  if (b.deadline === undefined || b.scanned < (b.minBytes ?? 0)) return false;
  return (b.now ?? Date.now)() >= b.deadline;
}

/** One file's scan state. */
class FileScan {
  pos: number;
  line: number;
  mid: boolean;
  carry: Uint8Array = new Uint8Array(0);
  readonly overlap: number;

  constructor(
    readonly where: ScanPlace,
    readonly needle: string,
    start: ScanPos,
    readonly b: ScanBudget,
  ) {
    ({ offset: this.pos, line: this.line, mid: this.mid } = start);
    this.overlap = maxMatchBytes(needle);
  }

  get full(): boolean {
    return this.b.hits.length >= this.b.limit;
  }

  stop(reason: StopReason): ScanEnd {
    return { done: false, pos: { offset: this.pos, line: this.line, mid: this.mid }, reason };
  }

  emit(piece: Uint8Array, at: number, reportBefore = Infinity): void {
    const h = matchPiece(piece, this.needle, reportBefore);
    if (!h) return;
    const place = this.where.jsonl ? { line: this.line } : { offset: at + h.at };
    const { key, source, sessionId, file, from } = this.where;
    this.b.hits.push({
      key,
      source,
      session_id: sessionId,
      file,
      ...(from ? { from } : {}),
      ...place,
      ...maskSnippet(h),
    });
  }

  /**
   * Matches `bytes` (file offset `at`: a window start of the current line) window by
   * window. Unless the line ends here (`final`), a window is matched only when MORE than
   * a window plus its overlap is present, exactly when a scan seeing the whole line would
   * also not treat it as the last. Returns how many leading bytes are done.
   */
  windows(bytes: Uint8Array, at: number, final: boolean): number {
    let s = 0;
    for (;;) {
      const rest = bytes.length - s;
      if (final && rest <= HIT_WINDOW_BYTES + this.overlap) {
        this.emit(bytes.subarray(s), at + s);
        return bytes.length;
      }
      if (!final && rest <= HIT_WINDOW_BYTES + this.overlap) return s;
      let cut = s + HIT_WINDOW_BYTES;
      while (cut > s + 1 && (bytes[cut]! & 0xc0) === 0x80) cut--;
      this.emit(bytes.subarray(s, cut + this.overlap), at + s, cut - s);
      s = cut;
      if (this.full) return s;
    }
  }

  /** Matches the rest of a line (without its newline) from `at`; false when the limit stopped it. */
  completeLine(bytes: Uint8Array, at: number): boolean {
    const done = this.windows(bytes, at, true);
    if (done === bytes.length) return true;
    this.pos = at + done;
    this.mid = true;
    return false;
  }

  /** Windows the partial line in the carry as far as whole windows go. */
  advanceCarry(): void {
    const done = this.windows(this.carry, this.pos, false);
    if (done === 0) return;
    this.carry = this.carry.slice(done);
    this.pos += done;
    this.mid = true;
  }
}

/** Scans `file` (reported as `where`) for `needle` from `start`. */
export async function scanFile(
  file: ScanFile,
  where: ScanPlace,
  needle: string,
  start: ScanPos,
  b: ScanBudget,
): Promise<ScanEnd> {
  if (start.offset > file.size) return { done: true };
  const f = new FileScan(where, needle, start, b);
  if (!f.mid && f.pos > 0 && (await file.read(f.pos - 1, 1))[0] !== 0x0a) f.mid = true;
  let readPos = f.pos;
  for (;;) {
    if (f.full) return f.stop("hits");
    const remaining = b.maxBytes - b.scanned;
    const late = readPos < file.size && remaining > 0 && timeUp(b);
    if (readPos < file.size && (remaining <= 0 || late)) {
      f.advanceCarry();
      return f.stop(f.full ? "hits" : late ? "time" : "bytes");
    }
    const chunk = readPos < file.size
      ? await file.read(readPos, Math.min(READ_CHUNK_BYTES, remaining, file.size - readPos))
      : new Uint8Array(0);
    if (chunk.length === 0) {
      // End of the file as opened: an unterminated last line is still text to search.
      if (f.carry.length > 0 && !f.completeLine(f.carry, f.pos)) return f.stop("hits");
      return { done: true };
    }
    b.scanned += chunk.length;
    readPos += chunk.length;
    const buf = concatBytes([f.carry, chunk]);
    const lastNl = buf.lastIndexOf(0x0a);
    let used = 0;
    if (lastNl >= 0 && !mayMatch(buf.subarray(0, lastNl + 1), needle)) {
      for (let nl = buf.indexOf(0x0a); nl >= 0; nl = buf.indexOf(0x0a, nl + 1)) f.line++;
      used = lastNl + 1;
      f.mid = false;
    } else if (lastNl >= 0) {
      for (let nl = buf.indexOf(0x0a); nl >= 0 && nl <= lastNl; nl = buf.indexOf(0x0a, used)) {
        if (!f.completeLine(buf.subarray(used, nl), f.pos + used)) return f.stop("hits");
        f.line++;
        used = nl + 1;
        f.mid = false;
        if (f.full) {
          f.pos += used;
          return f.stop("hits");
        }
      }
    }
    f.carry = buf.slice(used);
    f.pos += used;
    // Match whole windows of a long partial line now: memory stays bounded.
    if (f.carry.length > HIT_WINDOW_BYTES + f.overlap) f.advanceCarry();
  }
}
