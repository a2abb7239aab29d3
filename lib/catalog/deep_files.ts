/**
 * Which files of a native session Deep Search reads, and in what order: the spine
 * (session.jsonl), transcript.jsonl, every turns/ file (model text, reasoning, agent
 * input, stdout/stderr, messages and context dumps), the runtime logs
 * (`*_stdout.log`, `*_stderr.log`, `*_pty.log`) and daemon.log. Names are allow-listed
 * (they also validate cursors); entries that are not regular files (symlinks, FIFOs,
 * directories) are never listed, and openInside re-checks each one when it is read.
 * The order is total and stable, so a cursor naming a file that has since vanished
 * still resumes at the next file.
 */
import {
  parseTurnFileName,
  SESSION_JSONL,
  TRANSCRIPT_JSONL,
  TURNS_DIR,
} from "../session_log/mod.ts";
import { isRuntimeLogName, isTurnRel } from "./native_text.ts";
import { listInside } from "./safe_fs.ts";

const DAEMON_LOG = "daemon.log";

/** Scan group of an allow-listed name, or -1. */
function groupOf(rel: string): number {
  if (rel === SESSION_JSONL) return 0;
  if (rel === TRANSCRIPT_JSONL) return 1;
  if (isTurnRel(rel)) return 2;
  if (isRuntimeLogName(rel)) return 3;
  if (rel === DAEMON_LOG) return 4;
  return -1;
}

/** True for a file name Deep Search reads (relative to the session dir). */
export function isScannedName(rel: string): boolean {
  return groupOf(rel) >= 0;
}

/** Total order of scanned files: by group, then by name. */
export function compareScanned(a: string, b: string): number {
  return groupOf(a) - groupOf(b) || (a < b ? -1 : a > b ? 1 : 0);
}

/** The session's scanned files, in scan order. */
export async function scannedFiles(dir: string): Promise<string[]> {
  const top = (await listInside(dir, "")) ?? [];
  const out = top.filter((e) => e.kind === "file" && isScannedName(e.name)).map((e) => e.name);
  if (top.some((e) => e.name === TURNS_DIR && e.kind === "dir")) {
    for (const e of (await listInside(dir, TURNS_DIR)) ?? []) {
      if (e.kind === "file" && parseTurnFileName(e.name)) out.push(`${TURNS_DIR}/${e.name}`);
    }
  }
  return out.sort(compareScanned);
}
