/**
 * Opening a session directory, with the fallback done right. The upstream defect: on
 * failure it opened a fixed /tmp/intendant_session for the structured log only, leaving
 * INTENDANT_LOG_DIR, daemon.log and frames pointing at the broken directory. Here a
 * failure yields one fresh private directory (mkdtemp: 0700, unpredictable name, so a
 * pre-planted path can never be adopted) and every sink derives from that one path.
 * The fallback's parent must not let another uid rename the directory away and put its
 * own in its place (reliability-plan C3): it is owned by us or root, and not writable by
 * group or others unless sticky (as /tmp is). Otherwise the fallback is refused.
 */
import { join } from "node:path";
import { ensurePrivateDirSync, openRegularFileSync } from "../durable/mod.ts";
import { ContainmentError } from "../errors.ts";
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
      assertSafeParent(tmpDir, dir);
      return { dir, jsonl: prepareSessionDir(dir), fallback: { from: chosen, reason } };
    } catch (err2) {
      throw new Error(
        `Cannot open session directory "${chosen}" (${reason}) nor a fallback under "${tmpDir}"`,
        { cause: err2 },
      );
    }
  }
}

/**
 * Refuses (and removes) the fresh `dir` when its parent is controlled by another uid.
 * Our uid is read from `dir` itself: Deno.uid() needs a sys permission the runner lacks.
 */
function assertSafeParent(parent: string, dir: string): void {
  const mine = Deno.lstatSync(dir).uid;
  const p = Deno.statSync(parent);
  if (mine === null || p.uid === null || p.mode === null) return; // no owners (Windows)
  const foreign = p.uid !== mine && p.uid !== 0;
  const shared = (p.mode & 0o022) !== 0 && (p.mode & 0o1000) === 0;
  if (!foreign && !shared) return;
  Deno.removeSync(dir);
  throw new ContainmentError(
    `Refusing a fallback under "${parent}": ${
      foreign ? `owned by uid ${p.uid}` : `writable by others without the sticky bit`
    }`,
  );
}
