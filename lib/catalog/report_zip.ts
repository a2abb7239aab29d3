/**
 * The "Download session report" zip: every regular file of a native session directory,
 * recursively (turns/, frames/, file_snapshots/, daemon.log, runtime logs…), under
 * `<session-id>/`, plus a top-level README.txt saying what is inside and what was left
 * out and why. Left out, never followed: symlinks, FIFOs, sockets, devices, hardlinked
 * files (their inode may live outside the directory), directories deeper than
 * MAX_DEPTH, and files once REPORT_MAX_TOTAL_BYTES of content is reached. Each file is
 * opened through openInside (lstat → O_NOFOLLOW|O_NONBLOCK open → dev+ino check) and
 * read up to the size its handle reported, so a file growing meanwhile is cut
 * consistently. Only native sessions have a directory; external ones are refused.
 * The archive is STREAMED (zip_stream.ts): sessionReportStream validates the key, then
 * walks the directory only as the consumer pulls, one file open at a time and read in
 * 1 MiB pieces, so neither the archive nor any file of it is ever held whole; an aborted
 * download cancels the walk and closes the open file.
 * Secrets (issue 18): text files are masked as they stream (report_mask.ts: whole lines
 * per piece, the unfinished line carried, so a key split across two reads is still
 * masked); binary files (a NUL in the first 8000 bytes) are copied untouched. The README
 * says so and lists, per file, how many secrets of which kinds were masked.
 */
import { join } from "node:path";
import { InvalidInputError } from "../errors.ts";
import { resolveSessionKey } from "./resolve_key.ts";
import { listInside, openInside, type SafeFile } from "./safe_fs.ts";
import type { CatalogDeps } from "./types.ts";
import { ZIP_CHUNK_BYTES, ZIP_MAX_ENTRIES, ZIP_SMALL_BYTES, ZipStream } from "./zip_stream.ts";
import { looksBinary, maskedPieces, type MaskTally, SNIFF_BYTES } from "./report_mask.ts";
import { concatBytes } from "../text/mod.ts";

/** Content cap of one report (uncompressed). */
export const REPORT_MAX_TOTAL_BYTES = 256 * 1024 * 1024;
/** Deepest directory level walked below the session dir. */
const MAX_DEPTH = 16;
/** Entries kept (one is the README). */
const MAX_FILES = ZIP_MAX_ENTRIES - 1;

interface Walk {
  dir: string;
  cap: number;
  zip: ZipStream;
  prefix: string;
  total: number;
  files: number;
  skipped: { path: string; reason: string }[];
  /** Files in which secrets were masked. */
  masked: ({ path: string } & MaskTally)[];
}

async function* walk(w: Walk, rel: string, depth: number): AsyncGenerator<Uint8Array> {
  const entries = await listInside(w.dir, rel);
  if (entries === null) {
    w.skipped.push({ path: rel || ".", reason: "directory refused (symlink or swapped)" });
    return;
  }
  for (const e of entries) {
    const path = rel ? `${rel}/${e.name}` : e.name;
    if (e.kind === "symlink") w.skipped.push({ path, reason: "symlink (not followed)" });
    else if (e.kind === "other") w.skipped.push({ path, reason: "not a regular file" });
    else if (e.kind === "dir") {
      if (depth >= MAX_DEPTH) w.skipped.push({ path, reason: `deeper than ${MAX_DEPTH} levels` });
      else yield* walk(w, path, depth + 1);
    } else yield* addFile(w, path);
  }
}

async function* addFile(w: Walk, path: string): AsyncGenerator<Uint8Array> {
  if (w.files >= MAX_FILES) {
    w.skipped.push({ path, reason: `over the ${MAX_FILES}-file cap` });
    return;
  }
  const opened = await openInside(w.dir, path);
  if (!opened.ok) {
    w.skipped.push({ path, reason: `refused: ${opened.reason.replace("_", " ")}` });
    return;
  }
  const { file } = opened;
  try {
    if (w.total + file.size > w.cap) {
      w.skipped.push({ path, reason: `over the ${w.cap}-byte content cap (${file.size} bytes)` });
      return;
    }
    const name = `${w.prefix}${path}`;
    if (!w.zip.fits(name, file.size)) {
      w.skipped.push({ path, reason: "over the zip format's size limit" });
      return;
    }
    const entry = { mtimeMs: file.mtimeMs, mode: 0o600 };
    const head = await file.read(0, Math.min(file.size, SNIFF_BYTES));
    if (looksBinary(head)) w.total += yield* w.zip.file(name, file, file.size, entry);
    else {
      const tally: MaskTally = { secrets: 0, kinds: {} };
      const masked = maskedPieces(pieces(file), tally);
      if (file.size <= ZIP_SMALL_BYTES) {
        const parts: Uint8Array[] = [];
        for await (const p of masked) parts.push(p);
        const data = concatBytes(parts);
        yield* w.zip.bytes(name, data, entry);
        w.total += data.length;
      } else w.total += yield* w.zip.pieces(name, masked, file.size, entry);
      if (tally.secrets > 0) w.masked.push({ path, ...tally });
    }
    w.files++;
  } finally {
    await file.close();
  }
}

/** A file's first `size` bytes (its stat), in ZIP_CHUNK_BYTES pieces. */
async function* pieces(file: SafeFile): AsyncGenerator<Uint8Array> {
  for (let at = 0; at < file.size;) {
    const piece = await file.read(at, Math.min(ZIP_CHUNK_BYTES, file.size - at));
    if (piece.length === 0) return;
    at += piece.length;
    yield piece;
  }
}

function maskingNote(w: Walk): string[] {
  const lines = [
    "Secrets are masked in the text files: each API key, token, private-key block, password",
    "or credential that Intendant's secret rules recognise is replaced by its first 4",
    'characters, "…" and its kind (for example sk-p…[openai key]). Binary files (a NUL byte',
    "in their first 8000 bytes) are as on disk. The message index keeps the original text.",
  ];
  if (w.masked.length === 0) lines.push("No secrets were found.");
  else {
    const total = w.masked.reduce((n, m) => n + m.secrets, 0);
    lines.push(`Masked ${total} secret${total === 1 ? "" : "s"} in ${w.masked.length} file(s):`);
    for (const m of w.masked) {
      const kinds = Object.entries(m.kinds).map(([k, n]) => `${k} ×${n}`).join(", ");
      lines.push(`  ${m.path}: ${kinds}`);
    }
  }
  return [...lines, ""];
}

function readme(id: string, w: Walk, nowMs: number): string {
  const lines = [
    `Intendant session report: ${id}`,
    `Generated: ${new Date(nowMs).toISOString()}`,
    "",
    `${w.files} regular files (${w.total} bytes) of the session directory are under ${w.prefix}`,
    "(session.jsonl, session_meta.json, turns/, runtime logs, daemon.log and the rest, as on disk",
    "but for masked secrets).",
    "",
    ...maskingNote(w),
  ];
  if (w.skipped.length === 0) lines.push("Nothing was skipped.");
  else {
    lines.push(`Skipped (${w.skipped.length}):`);
    for (const s of w.skipped) lines.push(`  ${s.path}: ${s.reason}`);
  }
  return lines.join("\n") + "\n";
}

/** Options for {@link sessionReportZip}. */
export interface ReportOptions {
  /** Content cap (uncompressed bytes). @default REPORT_MAX_TOTAL_BYTES */
  maxTotalBytes?: number;
}

/** A report being streamed: the archive's chunks, and the session it is of. */
export interface ReportStream {
  sessionId: string;
  stream: ReadableStream<Uint8Array>;
}

/**
 * Streams the native session `key`'s directory as a zip. The key and options are checked
 * (and the session resolved) before this resolves, so a bad request fails before any byte
 * is sent; the walk then runs as the stream is read.
 */
export async function sessionReportStream(
  d: CatalogDeps,
  key: string,
  o: ReportOptions = {},
): Promise<ReportStream> {
  const { maxTotalBytes = REPORT_MAX_TOTAL_BYTES } = o;
  if (
    !Number.isInteger(maxTotalBytes) || maxTotalBytes < 0 || maxTotalBytes > REPORT_MAX_TOTAL_BYTES
  ) {
    throw new RangeError(
      `Invalid report cap "${maxTotalBytes}": expected 0-${REPORT_MAX_TOTAL_BYTES} bytes`,
    );
  }
  const s = await resolveSessionKey(d, key);
  if (s.source !== "intendant" || !s.dir) {
    throw new InvalidInputError(
      `"${s.key}" belongs to its own tool: only native sessions have a report`,
    );
  }
  const w: Walk = {
    dir: join(d.logsDir, s.session_id),
    cap: maxTotalBytes,
    zip: new ZipStream(),
    prefix: `${s.session_id}/`,
    total: 0,
    files: 0,
    skipped: [],
    masked: [],
  };
  const now = d.now ?? Date.now;
  async function* chunks(): AsyncGenerator<Uint8Array> {
    yield* walk(w, "", 0);
    const nowMs = now();
    const text = new TextEncoder().encode(readme(s.session_id, w, nowMs));
    yield* w.zip.bytes("README.txt", text, { mtimeMs: nowMs });
    yield* w.zip.finish();
  }
  return { sessionId: s.session_id, stream: ReadableStream.from(chunks()) };
}

/** The whole report in memory (small sessions, tests); the HTTP route streams it. */
export async function sessionReportZip(
  d: CatalogDeps,
  key: string,
  o: ReportOptions = {},
): Promise<Uint8Array> {
  const { stream } = await sessionReportStream(d, key, o);
  return new Uint8Array(await new Response(stream).arrayBuffer());
}
