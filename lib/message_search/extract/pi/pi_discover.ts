/**
 * Pi discovery: finds session files under each agent dir (a PI_CODING_AGENT_DIR) and
 * reads just their header line to name the unit. One file = one unit, keyed `pi:<id>`.
 *
 * On-disk facts (FORMAT.md §1, [src] pi-mono core/session-manager.ts):
 * `<agentDir>/sessions/--<cwd, leading slash dropped, / \ : → ->--/<ISO ts, : . → ->_<uuid>.jsonl`.
 * Non-ASCII and spaces stay in the dir name, so names are used verbatim (never normalised).
 * The session id is the header `id`; the file-name uuid is the same value for every file
 * Pi creates (newSession, createBranchedSession, forkFrom) and stands in when the header
 * has no usable id.
 *
 * Invariants: a missing agent dir or sessions/ is "not present" (no skip, no error);
 * symlinks, FIFOs and directories named like transcripts are refused and counted; only
 * real directories directly under sessions/ are descended (Pi writes nowhere deeper);
 * the walk is capped in directories descended and files header-checked, and everything
 * past a cap is counted; a file whose first line is not a session header is counted and
 * skipped (Pi itself would truncate it and start over); a second file claiming an id
 * already seen is counted and skipped (first wins: agent dirs in the order given, then
 * names). Headers are re-read only when a file's dev/ino/size/mtime changed.
 * Errors: one unreadable file or directory is counted, never fatal to the walk.
 */
import { basename, dirname, isAbsolute, join, normalize } from "node:path";
import { lineText } from "../../../durable/mod.ts";
import { readIncrement, statSource } from "../../cursor.ts";
import { parseHeader, type PiHeader } from "./pi_entries.ts";
import type { PiLimits } from "./pi_limits.ts";
import {
  countSkip,
  createWalkBudget,
  type Discovery,
  listDirBounded,
  type SessionUnit,
  type SkipReason,
  spendBudget,
} from "../framework/plugin.ts";

/** Walk bounds (see pi_limits.ts). */
export type PiWalkLimits = Pick<PiLimits, "maxDirs" | "maxFiles" | "maxHeaderBytes">;

/** A header read, or why the file is not a session. */
export type HeaderRead = { ok: true; header: PiHeader } | { ok: false; reason: string };

/** Header reads keyed by path, valid while the file's signature holds. */
export type HeaderCache = Map<string, { sig: string; read: HeaderRead }>;

/** The locator's `file` field caps relative paths at this many characters. */
const LOCATOR_FILE_MAX = 512;
const FILE_UUID = /_([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})\.jsonl$/i;

/** Reads and parses line 1 of a session file, refusing anything but a regular file. */
export async function readHeader(path: string, maxHeaderBytes: number): Promise<HeaderRead> {
  let inc;
  try {
    inc = await readIncrement(path, null, { maxBytes: 1, maxLineBytes: maxHeaderBytes });
  } catch (err) {
    if (err instanceof Deno.errors.NotFound) return { ok: false, reason: "vanished" };
    // ContainmentError (symlink, FIFO swapped in), EACCES, EIO: this file only is lost.
    if (err instanceof Error) {
      return {
        ok: false,
        reason: err.name === "ContainmentError" ? "not_a_regular_file" : "unreadable",
      };
    }
    throw err;
  }
  if (inc.oversizedLines.some((l) => l.lineNo === 1)) {
    return { ok: false, reason: "header_invalid" };
  }
  const first = inc.lines[0];
  // Pi flushes the header with the first entries in one go; a torn one completes shortly.
  if (!first) return { ok: false, reason: "header_pending" };
  const header = parseHeader(lineText(inc.bytes, first, inc.baseOffset));
  return header ? { ok: true, header } : { ok: false, reason: "header_invalid" };
}

/** The header id, else the uuid in the file name, else null. */
export function sessionIdOf(header: PiHeader, fileName: string): string | null {
  return header.id ?? FILE_UUID.exec(fileName)?.[1] ?? null;
}

/** Lists a directory sorted by name; null when it cannot be listed (counted). */
function listDir(dir: string, skipped: Record<string, number>): Promise<Deno.DirEntry[] | null> {
  return listDirBounded(dir, { skipped, unreadable: "any" });
}

/** Is `sessionsDir` a real directory? Missing → null (not present), else counted refusals. */
async function isSessionsDir(dir: string, skipped: Record<string, number>): Promise<boolean> {
  try {
    const st = await Deno.lstat(dir);
    if (st.isDirectory) return true;
    countSkip(skipped, st.isSymlink ? "symlink" : "sessions_not_a_dir");
    return false;
  } catch (err) {
    if (err instanceof Deno.errors.NotFound || err instanceof Deno.errors.NotADirectory) {
      return false;
    }
    if (!(err instanceof Error)) throw err;
    countSkip(skipped, "dir_unreadable" satisfies SkipReason);
    return false;
  }
}

/** Walks every agent dir; returns the units and the refreshed header cache. */
export async function discoverPi(
  agentDirs: readonly string[],
  limits: PiWalkLimits,
  cache: HeaderCache,
): Promise<{ discovery: Discovery; cache: HeaderCache }> {
  const units: SessionUnit[] = [];
  const skipped: Record<string, number> = {};
  const next: HeaderCache = new Map();
  const ids = new Set<string>();
  const budget = {
    dirs: createWalkBudget(limits.maxDirs),
    files: createWalkBudget(limits.maxFiles),
  };
  for (const agentDir of new Set(agentDirs)) {
    const sessionsDir = join(agentDir, "sessions");
    if (!(await isSessionsDir(sessionsDir, skipped))) continue;
    for (const d of (await listDir(sessionsDir, skipped)) ?? []) {
      if (d.isSymlink) countSkip(skipped, "symlink");
      else if (!d.isDirectory) countSkip(skipped, "not_a_session_dir");
      else if (!spendBudget(budget.dirs, skipped)) continue;
      else {
        const files = (await listDir(join(sessionsDir, d.name), skipped)) ?? [];
        // Newest first: names start with the creation timestamp, so a cap cuts the oldest.
        for (const f of files.reverse()) {
          if (!f.name.endsWith(".jsonl")) continue;
          if (!f.isFile) countSkip(skipped, "not_a_regular_file");
          else if (!spendBudget(budget.files, skipped)) continue;
          else {
            const rel = `sessions/${d.name}/${f.name}`;
            const path = join(sessionsDir, d.name, f.name);
            const unit = await unitFor(path, rel, agentDir, { limits, cache, next, skipped });
            if (unit && ids.has(unit.sessionId)) countSkip(skipped, "duplicate_session_id");
            else if (unit) {
              ids.add(unit.sessionId);
              units.push(unit);
            }
          }
        }
      }
    }
  }
  return { discovery: { units, skipped }, cache: next };
}

async function unitFor(
  path: string,
  rel: string,
  agentDir: string,
  o: {
    limits: PiWalkLimits;
    cache: HeaderCache;
    next: HeaderCache;
    skipped: Record<string, number>;
  },
): Promise<SessionUnit | null> {
  if (rel.length > LOCATOR_FILE_MAX) {
    countSkip(o.skipped, "path_too_long");
    return null;
  }
  const st = await statSource(path);
  if (st === null) return null; // Raced away since the listing.
  if (st.kind !== "file") {
    countSkip(o.skipped, "not_a_regular_file");
    return null;
  }
  const sig = `${st.dev}:${st.ino}:${st.size}:${st.mtime_ms}`;
  const hit = o.cache.get(path);
  const read = hit?.sig === sig ? hit.read : await readHeader(path, o.limits.maxHeaderBytes);
  o.next.set(path, { sig, read });
  if (!read.ok) {
    if (read.reason !== "vanished") countSkip(o.skipped, read.reason);
    return null;
  }
  const id = sessionIdOf(read.header, basename(path));
  if (id === null) {
    countSkip(o.skipped, "header_without_id");
    return null;
  }
  return {
    source: "pi",
    sessionId: id,
    key: `pi:${id}`,
    files: [{ path, role: "main" }],
    hint: { agentDir, rel },
  };
}

/**
 * The parent's session id for a fork: Pi's header stores the parent's PATH. Read only when
 * that path lies directly in a session dir of one of our agent dirs (never an arbitrary
 * file named by transcript content); anything else, or an unreadable header, is null.
 */
export async function parentIdOf(
  parentSession: string | null,
  agentDirs: readonly string[],
  maxHeaderBytes: number,
): Promise<string | null> {
  if (parentSession === null || !isAbsolute(parentSession)) return null;
  const target = normalize(parentSession);
  if (!target.endsWith(".jsonl")) return null;
  const inside = agentDirs.some((d) => {
    if (!isAbsolute(d)) return false;
    const prefix = join(normalize(d), "sessions") + "/";
    return target.startsWith(prefix) && target.slice(prefix.length).split("/").length === 2;
  });
  if (!inside) return null;
  try {
    if (!(await Deno.lstat(dirname(target))).isDirectory) return null;
  } catch (err) {
    if (!(err instanceof Error)) throw err;
    return null; // Parent gone or unreadable: the link is simply unknown.
  }
  const read = await readHeader(target, maxHeaderBytes);
  return read.ok ? sessionIdOf(read.header, basename(target)) : null;
}
