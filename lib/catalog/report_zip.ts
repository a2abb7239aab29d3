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
 */
import { join } from "node:path";
import { InvalidInputError } from "../errors.ts";
import { resolveSessionKey } from "./resolve_key.ts";
import { listInside, openInside } from "./safe_fs.ts";
import type { CatalogDeps } from "./types.ts";
import { ZIP_MAX_ENTRIES, ZipWriter } from "./zip_writer.ts";

/** Content cap of one report (uncompressed). */
export const REPORT_MAX_TOTAL_BYTES = 256 * 1024 * 1024;
/** Deepest directory level walked below the session dir. */
const MAX_DEPTH = 16;
/** Entries kept (one is the README). */
const MAX_FILES = ZIP_MAX_ENTRIES - 1;

interface Walk {
  dir: string;
  cap: number;
  zip: ZipWriter;
  prefix: string;
  total: number;
  files: number;
  skipped: { path: string; reason: string }[];
}

async function walk(w: Walk, rel: string, depth: number): Promise<void> {
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
      else await walk(w, path, depth + 1);
    } else await addFile(w, path);
  }
}

async function addFile(w: Walk, path: string): Promise<void> {
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
    const data = await file.read(0, file.size);
    w.zip.add(`${w.prefix}${path}`, data, { mtimeMs: file.mtimeMs, mode: 0o600 });
    w.total += data.length;
    w.files++;
  } finally {
    await file.close();
  }
}

function readme(id: string, w: Walk, nowMs: number): string {
  const lines = [
    `Intendant session report: ${id}`,
    `Generated: ${new Date(nowMs).toISOString()}`,
    "",
    `${w.files} regular files (${w.total} bytes) of the session directory are under ${w.prefix}`,
    "(session.jsonl, session_meta.json, turns/, runtime logs, daemon.log and the rest, as on disk).",
    "",
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

/** Zips the native session `key`'s directory. */
export async function sessionReportZip(
  d: CatalogDeps,
  key: string,
  o: ReportOptions = {},
): Promise<Uint8Array> {
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
    zip: new ZipWriter(),
    prefix: `${s.session_id}/`,
    total: 0,
    files: 0,
    skipped: [],
  };
  await walk(w, "", 0);
  const nowMs = (d.now ?? Date.now)();
  w.zip.add("README.txt", new TextEncoder().encode(readme(s.session_id, w, nowMs)), {
    mtimeMs: nowMs,
  });
  return w.zip.finish();
}
