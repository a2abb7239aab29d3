/**
 * One piece over the 600-line guide (≈ 630 lines), on purpose: the open check, the
 * classifier and the streaming reader share one cursor and its span and hashing rules, and
 * split they would export internals no other module may call (the full why ends this header).
 * File cursors: incremental, torn-line-safe reading of append-only JSONL transcripts, and
 * the per-sweep decision (new / unchanged / appended / rewritten / gone) made from a stored
 * {@link FileCursor} (contract in cursor_types.ts).
 *
 * Invariants (tests/RELIABILITY.md, table B):
 * - Only newline-terminated lines are consumed (lines.ts is the one splitter): `offset`
 *   sits at 0 or just past a "\n", so a torn tail waits for the next sweep.
 * - `prefix_hash` covers exactly `prefix_len` = min(4096, size at capture) bytes and is
 *   re-checked over that same span, so a file under 4 KiB does not look rewritten on every
 *   append (finding 6).
 * - `anchor_hash` covers the `anchor_len` (≤ 4096) bytes just before `offset`. Inode reuse
 *   is normal on ext4 (50/50 here), so identity + prefix cannot prove that the bytes we
 *   already consumed are still there; the anchor can (finding 5).
 * - Equal size + mtime skips reading only when the cursor was captured more than
 *   RACY_WINDOW_MS after that mtime (git's racy-clean rule); otherwise the hashes decide.
 * - Only regular files are opened, and only through the one contained reader
 *   (durable/contained_open.ts: lstat, O_NOFOLLOW|O_NONBLOCK, fstat dev+ino), so a symlink,
 *   FIFO, socket or device swapped in after the lstat is refused without blocking or reading.
 *   `hardlinks` says whether a file with more than one link is read: "allow" (the default)
 *   for agents' transcripts, whose twins discovery deduplicates by identity; the native
 *   extractor passes "refuse" (a hardlink into a session directory may name any file).
 * - Memory is bounded: lines stream in 1 MiB chunks (into one buffer sized for the read:
 *   at most the file's unread bytes, and the byte budget plus a chunk), and a line over
 *   `maxLineBytes` is skipped to its "\n" without being buffered past the cap (finding 7:
 *   1 GB lines).
 * Errors: a refused path throws ContainedReadError (a ContainmentError with a typed
 * `reason`: symlink, not_regular, swapped, hardlinked); EACCES/EPERM throw
 * Deno.errors.PermissionDenied; a cursor that no longer matches the file it is resumed on
 * throws CursorMismatchError (treat as rewritten). Malformed JSON is the consumer's business.
 * Why one piece: the open check, the
 * classifier and the streaming reader share the span and hashing rules and the cursor they
 * produce; split, their internals (scanLines, captureCursor, checkSpans) would become
 * exports that no other module may call, and the one reader every source goes through
 * would no longer be readable in one place.
 */
import { createHash } from "node:crypto";
import {
  type ContainedFile,
  type LineSpan,
  openContained,
  refusalError,
  splitCompleteLines,
} from "../durable/mod.ts";
import type { CursorClass, FileCursor } from "./cursor_types.ts";
import { noteSourceOpen } from "./io_stats.ts";

/** Bytes covered by the prefix hash once a file is at least this long. */
export const PREFIX_SPAN_BYTES = 4096;
/** Bytes before `offset` covered by the anchor hash. */
export const ANCHOR_SPAN_BYTES = 4096;
/** 2 s covers the coarsest mtime granularity we may meet (FAT, some network file systems). */
export const RACY_WINDOW_MS = 2000;
export const READ_CHUNK_BYTES = 1 << 20;
export const MAX_LINE_BYTES = 64 << 20;
export const MAX_INCREMENT_BYTES = 256 << 20;

/** What a sweep needs from lstat. "other" (symlink, FIFO, socket, dir, device) is never opened. */
export interface FileStatLite {
  kind: "file" | "other";
  dev: number;
  ino: number;
  size: number;
  mtime_ms: number | null;
  /** Link count (lstat/fstat); absent where a stat was rebuilt from a stored cursor. */
  nlink?: number;
}

/** Whether a file with more than one link may be read (see the header). */
export type HardlinkPolicy = "refuse" | "allow";

/** The cursor handed to {@link readIncrement} does not describe the file any more. */
export class CursorMismatchError extends Error {
  /** "identity" | "shrunk" | "prefix" | "anchor", as in a rewritten classification. */
  readonly reason: string;
  constructor(message: string, reason: string, options?: ErrorOptions) {
    super(message, options);
    this.name = "CursorMismatchError";
    this.reason = reason;
  }
}

const NL = 0x0a;

function hash16(bytes: Uint8Array): string {
  return createHash("sha256").update(bytes).digest("hex").slice(0, 16);
}

function toStatLite(st: Deno.FileInfo): FileStatLite {
  return {
    kind: st.isFile ? "file" : "other",
    dev: st.dev ?? 0,
    ino: st.ino ?? 0,
    size: st.size,
    // Truncated to whole ms on both the lstat and the fstat path so equality is exact.
    mtime_ms: st.mtime ? Math.trunc(st.mtime.getTime()) : null,
    nlink: st.nlink ?? 1,
  };
}

function fileStatLite(f: ContainedFile): FileStatLite {
  return {
    kind: "file",
    dev: f.dev,
    ino: f.ino,
    size: f.size,
    mtime_ms: Number.isFinite(f.mtimeMs) ? Math.trunc(f.mtimeMs) : null,
    nlink: f.nlink,
  };
}

function isAbsent(err: unknown): boolean {
  return err instanceof Deno.errors.NotFound || err instanceof Deno.errors.NotADirectory;
}

/**
 * lstat of a source path; null when it does not exist. Never follows a symlink.
 * Synchronous on purpose: a sweep lstats every known file, and a thread-pool round trip
 * per call cost ~15× the syscall itself (a no-op sweep was mostly waiting on them); a
 * local lstat blocks the event loop for microseconds. Deno's FileInfo carries the same
 * whole-ms mtime node's Stats gives the fstat path, so both sides compare equal.
 */
// deno-lint-ignore require-await
export async function statSource(path: string): Promise<FileStatLite | null> {
  try {
    return toStatLite(Deno.lstatSync(path));
  } catch (err) {
    // ENOTDIR: a parent component is now a file; there is no source here either way.
    if (isAbsent(err)) return null;
    throw err;
  }
}

interface OpenSource {
  file: ContainedFile;
  stat: FileStatLite;
}

/**
 * Opens a regular file through the contained reader, checked against `expected` (the
 * lstat the caller classified) or a fresh lstat. Async on purpose (unlike statSource): a
 * loop of refused opens (a path swapped to a symlink) must still let other tasks run.
 */
async function openRegular(
  path: string,
  expected: FileStatLite | null,
  hardlinks: HardlinkPolicy,
): Promise<OpenSource> {
  if (expected !== null && expected.kind !== "file") {
    throw refusalError(path, "not_regular");
  }
  const opened = await openContained(path, {
    hardlinks,
    ...(expected ? { expected: { dev: expected.dev, ino: expected.ino } } : {}),
  });
  if (!opened.ok) throw refusalError(path, opened.reason);
  noteSourceOpen();
  return { file: opened.file, stat: fileStatLite(opened.file) };
}

type ReadRange = (offset: number, len: number) => Promise<Uint8Array>;

/** Re-hashes the cursor's own spans; returns the rewrite reason, or null when both hold. */
async function checkSpans(
  cursor: FileCursor,
  size: number,
  read: ReadRange,
): Promise<string | null> {
  if (size < cursor.prefix_len) return "shrunk";
  const anchorStart = cursor.offset - cursor.anchor_len;
  let prefix: Uint8Array;
  let anchor: Uint8Array;
  if (anchorStart <= cursor.prefix_len) {
    // Small file: one read covers both spans. A short read hashes differently: mismatch.
    const bytes = await read(0, Math.max(cursor.prefix_len, cursor.offset));
    prefix = bytes.subarray(0, cursor.prefix_len);
    anchor = bytes.subarray(anchorStart, cursor.offset);
  } else {
    prefix = await read(0, cursor.prefix_len);
    anchor = await read(anchorStart, cursor.anchor_len);
  }
  if (hash16(prefix) !== cursor.prefix_hash) return "prefix";
  if (hash16(anchor) !== cursor.anchor_hash) return "anchor";
  return null;
}

/** git's racy-clean rule: size+mtime prove nothing if mtime is within the window of capture. */
function isCleanByStat(cursor: FileCursor, stat: FileStatLite, now: number): boolean {
  return cursor.mtime_ms !== null && stat.mtime_ms === cursor.mtime_ms &&
    stat.size === cursor.size && cursor.captured_at_ms - cursor.mtime_ms > RACY_WINDOW_MS &&
    // A capture stamped in the future means the clock stepped back: the margin proves nothing.
    cursor.captured_at_ms <= now;
}

/** Options for {@link classifyCursor}. */
export interface ClassifyOptions {
  /** Wall clock now, in ms. */
  now: number;
  /** Reads bytes [offset, offset+len) of the file `stat` describes (fewer at end of file). */
  readRange: ReadRange;
}

/**
 * Decides what a sweep does with one file. A missing path, and a non-regular one (which is
 * never read), are "gone". Reads at most 8 KiB, and nothing on the racily-clean fast path.
 */
export async function classifyCursor(
  cursor: FileCursor | null,
  stat: FileStatLite | null,
  options: ClassifyOptions,
): Promise<CursorClass> {
  const { now, readRange } = options;
  if (stat === null || stat.kind !== "file") return { kind: "gone" };
  if (cursor === null) return { kind: "new" };
  if (stat.dev !== cursor.dev || stat.ino !== cursor.ino) {
    return { kind: "rewritten", reason: "identity" };
  }
  if (stat.size < cursor.offset) return { kind: "rewritten", reason: "shrunk" };
  if (isCleanByStat(cursor, stat, now)) return { kind: "unchanged" };
  const reason = await checkSpans(cursor, stat.size, readRange);
  if (reason !== null) return { kind: "rewritten", reason };
  // Equal to the captured size: the unconsumed torn tail (if any) is still torn.
  if (stat.size === cursor.offset || stat.size === cursor.size) return { kind: "unchanged" };
  return { kind: "appended" };
}

/** Options for {@link classifySource}. */
export interface ClassifySourceOptions {
  /** @default Date.now() */
  now?: number;
  /** @default "allow" (see the header) */
  hardlinks?: HardlinkPolicy;
}

/** statSource + classifyCursor, opening the file (identity-checked) only if bytes are needed. */
export async function classifySource(
  path: string,
  cursor: FileCursor | null,
  options: ClassifySourceOptions = {},
): Promise<{ stat: FileStatLite | null; class: CursorClass }> {
  const { now = Date.now(), hardlinks = "allow" } = options;
  const stat = await statSource(path);
  const held: { open?: OpenSource } = {};
  try {
    const readRange: ReadRange = async (offset, len) => {
      held.open ??= await openRegular(path, stat, hardlinks);
      return held.open.file.read(offset, len);
    };
    return { stat, class: await classifyCursor(cursor, stat, { now, readRange }) };
  } finally {
    await held.open?.file.close();
  }
}

/**
 * Reads bytes [offset, offset+len) of `path` through the contained reader (fewer at end
 * of file): the `readRange` of a classifyCursor call made on a stat taken elsewhere.
 */
export async function readSourceRange(
  path: string,
  offset: number,
  len: number,
  o: { expected: FileStatLite | null; hardlinks?: HardlinkPolicy },
): Promise<Uint8Array> {
  const { file } = await openRegular(path, o.expected, o.hardlinks ?? "allow");
  try {
    return await file.read(offset, len);
  } finally {
    await file.close();
  }
}

/** Options for {@link readIncrement}. */
export interface ReadIncrementOptions {
  /** Stop at the first line boundary at or past this many bytes. @default MAX_INCREMENT_BYTES */
  maxBytes?: number;
  /** Longer lines are skipped unread and reported. @default MAX_LINE_BYTES */
  maxLineBytes?: number;
  /** Clock for `captured_at_ms`. @default Date.now */
  now?: () => number;
  /** rewrite_epoch of the new cursor when reading from scratch (`from` null). @default 0 */
  rewriteEpoch?: number;
  /**
   * Record the whole file's size in the cursor even when the increment stopped early, so
   * the file classifies "unchanged" until it really changes. For stub cursors of files
   * that failed closed and must not be re-read. @default false
   */
  claimWholeFile?: boolean;
  /** Whether a file with more than one link is read. @default "allow" (see the header) */
  hardlinks?: HardlinkPolicy;
}

/** A line skipped because it exceeded `maxLineBytes` (length without its "\n"). */
export interface OversizedLine {
  lineNo: number;
  bytes: number;
}

/** What one {@link readIncrement} consumed. `bytes` holds complete lines from `baseOffset`. */
export interface Increment {
  baseOffset: number;
  firstLineNo: number;
  bytes: Uint8Array;
  /** Spans with absolute file offsets: decode with lineText(bytes, span, baseOffset). */
  lines: LineSpan[];
  /** Resume point: may lie past `baseOffset + bytes.length` when a skipped line ended it. */
  cursor: FileCursor;
  oversizedLines: OversizedLine[];
  /** False when the increment stopped before the end of the file (budget, oversized line). */
  complete: boolean;
}

function assertPositiveInt(name: string, value: number): void {
  if (!Number.isSafeInteger(value) || value <= 0) {
    throw new RangeError(`Option "${name}" must be a positive integer: got ${value}`);
  }
}

/**
 * Reads the complete lines after `from` (or from the start) and returns them with the
 * cursor to resume from. Verifies `from` against the open file first (CursorMismatchError),
 * so a rewrite between classification and reading is not read as an append.
 */
export async function readIncrement(
  path: string,
  from: FileCursor | null,
  options: ReadIncrementOptions = {},
): Promise<Increment> {
  const { maxBytes = MAX_INCREMENT_BYTES, maxLineBytes = MAX_LINE_BYTES, now = Date.now } = options;
  const epoch = from ? from.rewrite_epoch ?? 0 : options.rewriteEpoch ?? 0;
  assertPositiveInt("maxBytes", maxBytes);
  assertPositiveInt("maxLineBytes", maxLineBytes);
  const { file, stat } = await openRegular(path, null, options.hardlinks ?? "allow");
  try {
    // Taken right after the fstat: any later write gets an mtime at or after this instant.
    const capturedAt = now();
    if (from !== null) await assertCursorHolds(path, from, stat, file);
    const scan = await scanLines(file, {
      start: from?.offset ?? 0,
      firstLineNo: from?.next_line ?? 1,
      end: stat.size,
      maxBytes,
      maxLineBytes,
    });
    const bytes = concatParts(scan.parts, scan.byteLength);
    const { lines } = splitCompleteLines(bytes, scan.baseOffset, scan.firstLineNo);
    let nextLine = scan.firstLineNo + lines.length;
    const oversizedLines = scan.tailOversized === null
      ? scan.oversized
      : [...scan.oversized, { lineNo: nextLine++, bytes: scan.tailOversized }];
    // Stopped before the end (byte budget, or an oversized line ended the increment): record
    // the consumed offset as the size, so the next classification sees unread bytes and
    // says "appended" instead of "unchanged".
    const cursorStat = scan.early && !options.claimWholeFile
      ? { ...stat, size: scan.consumedTo }
      : stat;
    const cursor = await captureCursor(
      file,
      cursorStat,
      scan.consumedTo,
      nextLine,
      capturedAt,
      epoch,
    );
    return {
      baseOffset: scan.baseOffset,
      firstLineNo: scan.firstLineNo,
      bytes,
      lines,
      cursor,
      oversizedLines,
      complete: !scan.early,
    };
  } finally {
    await file.close();
  }
}

async function assertCursorHolds(
  path: string,
  from: FileCursor,
  stat: FileStatLite,
  file: ContainedFile,
): Promise<void> {
  let reason: string | null = null;
  if (stat.dev !== from.dev || stat.ino !== from.ino) reason = "identity";
  else if (stat.size < from.offset) reason = "shrunk";
  else reason = await checkSpans(from, stat.size, (o, l) => file.read(o, l));
  if (reason !== null) {
    throw new CursorMismatchError(
      `Cursor for "${path}" no longer matches the file: ${reason}`,
      reason,
    );
  }
}

async function captureCursor(
  file: ContainedFile,
  stat: FileStatLite,
  offset: number,
  nextLine: number,
  capturedAt: number,
  rewriteEpoch: number,
): Promise<FileCursor> {
  const prefixLen = Math.min(PREFIX_SPAN_BYTES, stat.size);
  const anchorLen = Math.min(ANCHOR_SPAN_BYTES, offset);
  // A concurrent truncation makes these reads short; the hashes then mismatch next sweep,
  // which rebuilds: conservative, never silent.
  const prefix = await file.read(0, prefixLen);
  const anchor = await file.read(offset - anchorLen, anchorLen);
  return {
    dev: stat.dev,
    ino: stat.ino,
    size: stat.size,
    mtime_ms: stat.mtime_ms,
    captured_at_ms: capturedAt,
    prefix_len: prefixLen,
    prefix_hash: hash16(prefix),
    offset,
    anchor_len: anchorLen,
    anchor_hash: hash16(anchor),
    next_line: nextLine,
    rewrite_epoch: rewriteEpoch,
  };
}

interface ScanOptions {
  start: number;
  firstLineNo: number;
  /** fstat size at open: appends after it wait for the next sweep, so offset ≤ size. */
  end: number;
  maxBytes: number;
  maxLineBytes: number;
}

interface Scan {
  baseOffset: number;
  /** Number of the first kept line (past any oversized lines skipped before it). */
  firstLineNo: number;
  parts: Uint8Array[];
  byteLength: number;
  consumedTo: number;
  /** Oversized lines skipped before the first kept line (their numbers are known). */
  oversized: OversizedLine[];
  /**
   * Length of an oversized line that ended the increment right after the kept lines. Its
   * number is firstLineNo + the kept line count, which the caller's split knows: the scan
   * does not count lines it does not have to look at.
   */
  tailOversized: number | null;
  /** Returned before `end` with complete lines possibly left unread. */
  early?: boolean;
}

/**
 * Streams [start, end) in chunks, keeping complete lines only. An oversized line is
 * dropped once it passes the cap and then counted, not kept, up to its "\n". `parts` must
 * stay contiguous from `baseOffset`, so a skipped line either rebases an empty result or
 * ends the increment (the caller resumes after it).
 * A chunk that can hold neither an oversized line nor the `maxBytes` boundary is taken
 * whole up to its last "\n" (one native lastIndexOf); only the others are walked line by
 * line. Both give the same parts: the walk only decides where to stop.
 */
async function scanLines(file: ContainedFile, o: ScanOptions): Promise<Scan> {
  const r: Scan = {
    baseOffset: o.start,
    firstLineNo: o.firstLineNo,
    parts: [],
    byteLength: 0,
    consumedTo: o.start,
    oversized: [],
    tailOversized: null,
  };
  let partial: Uint8Array[] = [];
  let partialLen = 0;
  let skipping = false;
  let pos = o.start;
  let scratch: Uint8Array | null = null;
  // Kept chunks are read one after another into one region sized for the whole read, so
  // the parts they leave are adjacent views that concatParts returns without a copy (on
  // the bench's 85 MB transcript the per-chunk buffers and their final copy were ≈ 60 ms
  // of a 200 ms read). The region holds file bytes from `o.start` on, without a gap: once
  // a line is skipped, or the region is full, chunks are fresh buffers again.
  let region: Uint8Array | null = null;
  let regionAt = 0;
  while (pos < o.end) {
    // Kept chunks must be fresh (their subarrays become parts); a skipped line reuses one.
    const want = Math.min(READ_CHUNK_BYTES, o.end - pos);
    let buf: Uint8Array;
    if (skipping) {
      buf = scratch ??= new Uint8Array(READ_CHUNK_BYTES);
      region = null;
    } else {
      if (pos === o.start) region = new Uint8Array(Math.min(o.end - o.start, o.maxBytes + want));
      buf = region !== null && regionAt + want <= region.length
        ? region.subarray(regionAt, regionAt + want)
        : new Uint8Array(want);
    }
    const n = await file.readInto(buf, pos, want);
    if (n === 0) break; // Shrank under us: the next sweep classifies it.
    if (region !== null && buf.buffer === region.buffer) regionAt += n;
    else region = null;
    const chunk = buf.subarray(0, n);
    const keep = (a: number, b: number) =>
      buf === scratch ? chunk.slice(a, b) : chunk.subarray(a, b);
    const chunkStart = pos;
    pos += n;
    // Every line ending in (or running through) this chunk is at most partialLen + n long.
    const last = skipping ? -1 : chunk.lastIndexOf(NL);
    if (
      !skipping && partialLen + n <= o.maxLineBytes &&
      r.byteLength + partialLen + last + 1 < o.maxBytes
    ) {
      if (last >= 0) {
        r.parts.push(...partial, keep(0, last + 1));
        r.byteLength += partialLen + last + 1;
        r.consumedTo = chunkStart + last + 1;
        partial = [];
        partialLen = 0;
      }
      if (last + 1 < n) partial.push(keep(last + 1, n));
      partialLen += n - (last + 1);
      continue;
    }
    // The complete lines kept from one chunk are contiguous: they become ONE part
    // [runStart, runEnd), not one per line.
    let runStart = -1;
    let runEnd = 0;
    const flushRun = () => {
      if (runStart >= 0) r.parts.push(keep(runStart, runEnd));
      runStart = -1;
    };
    let p = 0;
    while (p < n) {
      const segStart = p;
      const nl = chunk.indexOf(NL, p);
      const lineLen = partialLen + ((nl < 0 ? n : nl) - p);
      if (!skipping && lineLen > o.maxLineBytes) {
        partial = []; // Release what was buffered; from here the line is only counted.
        skipping = true;
      }
      if (nl < 0) {
        flushRun();
        if (!skipping) partial.push(keep(segStart, n));
        partialLen = lineLen;
        break;
      }
      p = nl + 1;
      r.consumedTo = chunkStart + p;
      partialLen = 0;
      if (skipping) {
        skipping = false;
        // Kept bytes (earlier chunks, or this chunk's run before the long line) end here.
        if (r.byteLength > 0) {
          flushRun();
          r.tailOversized = lineLen;
          return { ...r, early: true };
        }
        r.oversized.push({ lineNo: r.firstLineNo++, bytes: lineLen });
        r.baseOffset = r.consumedTo;
        continue;
      }
      if (partial.length > 0) {
        // Only the chunk's first line continues earlier chunks: the run is still empty.
        r.parts.push(...partial);
        partial = [];
      }
      if (runStart < 0) runStart = segStart;
      runEnd = p;
      r.byteLength += lineLen + 1;
      if (r.byteLength >= o.maxBytes) {
        flushRun();
        return { ...r, early: true };
      }
    }
    flushRun();
  }
  return r;
}

/**
 * The parts as one buffer: views that lie end to end in one buffer (scanLines' region)
 * become one view of it, unless that would keep a buffer more than twice their size
 * alive (a read cut short early); anything else is copied.
 */
function concatParts(parts: Uint8Array[], total: number): Uint8Array {
  if (parts.length === 1) return parts[0]!;
  const first = parts[0];
  if (first !== undefined && 2 * total >= first.buffer.byteLength) {
    let at = first.byteOffset;
    let adjacent = true;
    for (const p of parts) {
      if (p.buffer !== first.buffer || p.byteOffset !== at) {
        adjacent = false;
        break;
      }
      at += p.length;
    }
    if (adjacent) return new Uint8Array(first.buffer, first.byteOffset, total);
  }
  const out = new Uint8Array(total);
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

/**
 * Identity of a source set (paths, dev/ino, prefix hash), deliberately not its offsets.
 * While a file is under 4 KiB its prefix span grows with it, so its fingerprint changes
 * on appends until the span is full (the price of finding 6; see the store's gate).
 */
export function cursorFingerprint(cursors: Record<string, FileCursor>): string {
  const h = createHash("sha256");
  for (const path of Object.keys(cursors).sort()) {
    const c = cursors[path]!;
    // JSON-quoting the path keeps the encoding unambiguous for names containing spaces or "\n".
    // Not prefix_hash: it grows with a file under 4 KiB, and would make every append look
    // like a rebuild to the store's stale-writer gate.
    h.update(`${JSON.stringify(path)} ${c.dev} ${c.ino} ${c.rewrite_epoch ?? 0}\n`);
  }
  return h.digest("hex").slice(0, 16);
}

/** Sum of consumed offsets: the store's stale-writer gate compares it. */
export function cursorWatermark(cursors: Record<string, FileCursor>): number {
  let sum = 0;
  for (const c of Object.values(cursors)) sum += c.offset;
  return sum;
}
