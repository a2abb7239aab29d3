/**
 * Opening a session directory, with the fallback done right. The upstream defect: on
 * failure it opened a fixed /tmp/intendant_session for the structured log only, leaving
 * INTENDANT_LOG_DIR, daemon.log and frames pointing at the broken directory. Here a
 * failure yields one fresh private directory (mkdtemp: 0700, unpredictable name, so a
 * pre-planted path can never be adopted) and every sink derives from that one path.
 */
import { join } from "node:path";
import { ensurePrivateDirSync, openRegularFileSync } from "../durable/mod.ts";
import { SESSION_JSONL, TURNS_DIR } from "./paths.ts";

/** A prepared session directory with its open event spine. */
export interface OpenedDir {
  dir: string;
  jsonl: Deno.FsFile;
  /** Set when the chosen directory failed and we fell back. */
  fallback: { from: string; reason: string } | null;
}

/** Creates (or reopens) a session dir: 0700 dir, real turns/ inside, session.jsonl opened for append. */
export function prepareSessionDir(dir: string): Deno.FsFile {
  ensurePrivateDirSync(dir);
  const turns = join(dir, TURNS_DIR);
  ensurePrivateDirSync(turns);
  // ensurePrivateDirSync refuses a symlinked turns/; realPath containment is rechecked per write.
  return openRegularFileSync(dir, SESSION_JSONL, { root: dir, append: true });
}

/**
 * Opens `chosen`, or on any failure a fresh `intendant-session-*` dir under `tmpDir`.
 * Throws only when both fail, naming both reasons.
 */
export function openSessionDir(chosen: string, tmpDir: string): OpenedDir {
  try {
    return { dir: chosen, jsonl: prepareSessionDir(chosen), fallback: null };
  } catch (err) {
    const reason = err instanceof Error ? err.message : String(err);
    let dir: string;
    try {
      dir = Deno.makeTempDirSync({ dir: tmpDir, prefix: "intendant-session-" });
      return { dir, jsonl: prepareSessionDir(dir), fallback: { from: chosen, reason } };
    } catch (err2) {
      throw new Error(
        `Cannot open session directory "${chosen}" (${reason}) nor a fallback under "${tmpDir}"`,
        { cause: err2 },
      );
    }
  }
}
