/**
 * Factory Droid discovery (formats-more.md §5.1, §5.4; [src] droid-sdk-typescript
 * session-discovery.ts): under each Factory home given (`~/.factory`; no environment
 * override is known, the caller resolves the path):
 * - `sessions/<sanitized cwd>/<id>.jsonl` (current), `sessions/<id>.jsonl` (legacy root
 *   files), and `projects/<slug>/<id>.jsonl` (newer builds [3p, unc]) — every file read
 *   the same way; `.settings.json`, `.favorites`, `history.json`, `sessions-index.json`
 *   are not transcripts.
 * - Line 1 (`session_start`) names the session (`id`, else the file stem) and, for a
 *   sub-agent session, `callingSessionId`: such a file joins its caller's unit
 *   (`droid:<callingSessionId>`, role "subagent"), so its prose is flagged subagent under
 *   the parent (§8.6). A fork (rewind, compaction successor) is its own session.
 * Line 1 is re-read only when the file's identity, size or mtime changed (a cache kept
 * by the extractor; bounded). Invariants: missing dirs are "not present"; symlinks are
 * never followed (counted); the walk is budgeted and sorted; the same session id twice
 * is counted ("duplicate_session_id"), the first wins.
 */
import { join } from "node:path";
import { readIncrement, statSource } from "../../cursor.ts";
import {
  countSkip,
  createWalkBudget,
  type Discovery,
  listDirBounded,
  type SessionUnit,
  type SkipReason,
  type WalkBudget,
} from "../framework/plugin.ts";
import { type DroidHeader, headerOf } from "./droid_lines.ts";

const SESSION_ID = /^[A-Za-z0-9][A-Za-z0-9._-]{0,199}$/;

/** Line-1 reads keyed by path, valid while the signature holds. */
export type DroidHeaderCache = Map<string, { sig: string; header: DroidHeader | null }>;

/** Bounds of one discovery. */
export interface DroidWalkLimits {
  maxWalkEntries: number;
  maxHeaderBytes: number;
}

interface Found {
  path: string;
  id: string;
  header: DroidHeader | null;
}

/** Reads line 1 of `path` as a session_start (null: none, torn, or too long). */
async function readHeader(path: string, maxHeaderBytes: number): Promise<DroidHeader | null> {
  const inc = await readIncrement(path, null, { maxBytes: 1, maxLineBytes: maxHeaderBytes });
  const first = inc.lines[0];
  if (!first || first.lineNo !== 1) return null;
  try {
    const bytes = inc.bytes.subarray(first.start - inc.baseOffset, first.end - inc.baseOffset);
    return headerOf(JSON.parse(new TextDecoder("utf-8", { fatal: true }).decode(bytes)));
  } catch {
    // Not a header: the extractor counts the line when it reads the file.
    return null;
  }
}

async function sessionFiles(
  dir: string,
  o: { budget: WalkBudget; skipped: Record<string, number>; descend: boolean },
): Promise<{ files: string[]; dirs: string[] }> {
  const out = { files: [] as string[], dirs: [] as string[] };
  const entries = await listDirBounded(dir, {
    budget: o.budget,
    skipped: o.skipped,
    counting: "once",
  });
  for (const e of entries ?? []) {
    if (e.isDirectory) {
      if (o.descend) out.dirs.push(join(dir, e.name));
      continue;
    }
    if (!e.name.endsWith(".jsonl")) continue;
    if (!e.isFile) {
      countSkip(o.skipped, "not_a_regular_file" satisfies SkipReason);
      continue;
    }
    out.files.push(join(dir, e.name));
  }
  return out;
}

/** Lists every session under `homes`, sub-agent sessions joined to their callers. */
export async function discoverDroid(
  homes: readonly string[],
  limits: DroidWalkLimits,
  cache: DroidHeaderCache,
): Promise<Discovery> {
  const skipped: Record<string, number> = {};
  const budget = createWalkBudget(limits.maxWalkEntries);
  const found: Found[] = [];
  const seen = new Set<string>();
  const paths: string[] = [];
  for (const home of homes) {
    for (const top of ["sessions", "projects"]) {
      const root = await sessionFiles(join(home, top), { budget, skipped, descend: true });
      paths.push(...root.files);
      for (const d of root.dirs) {
        paths.push(...(await sessionFiles(d, { budget, skipped, descend: false })).files);
      }
    }
  }
  const live = new Set(paths);
  for (const k of [...cache.keys()]) if (!live.has(k)) cache.delete(k);
  for (const path of paths) {
    const st = await statSource(path);
    if (st === null || st.kind !== "file") continue;
    const sig = `${st.dev}:${st.ino}:${st.size}:${st.mtime_ms}`;
    let hit = cache.get(path);
    if (hit?.sig !== sig) {
      let header: DroidHeader | null;
      try {
        header = await readHeader(path, limits.maxHeaderBytes);
      } catch (err) {
        // Swapped to a symlink/FIFO, or unreadable: this file only is lost, and counted.
        if (!(err instanceof Error) || err instanceof Deno.errors.NotFound) continue;
        countSkip(skipped, err.name === "ContainmentError" ? "not_a_regular_file" : "unreadable");
        continue;
      }
      hit = { sig, header };
      cache.set(path, hit);
    }
    const stem = path.slice(path.lastIndexOf("/") + 1, -".jsonl".length);
    const id = hit.header?.id ?? stem;
    if (!SESSION_ID.test(id)) {
      countSkip(skipped, "unexpected_name");
      continue;
    }
    if (seen.has(id)) {
      countSkip(skipped, "duplicate_session_id");
      continue;
    }
    seen.add(id);
    found.push({ path, id, header: hit.header });
  }
  return { units: group(found), skipped };
}

/** Mains first (discovery order), each sub-agent file appended to its caller's unit. */
function group(found: Found[]): SessionUnit[] {
  const units = new Map<string, SessionUnit>();
  const unitFor = (id: string) => {
    let u = units.get(id);
    if (!u) {
      u = { source: "droid", sessionId: id, key: `droid:${id}`, files: [] };
      units.set(id, u);
    }
    return u;
  };
  for (const f of found) {
    const caller = f.header?.callingSessionId ?? null;
    if (caller === null || caller === f.id || !SESSION_ID.test(caller)) {
      unitFor(f.id).files.push({ path: f.path, role: "main" });
    }
  }
  for (const f of found) {
    const caller = f.header?.callingSessionId ?? null;
    if (caller !== null && caller !== f.id && SESSION_ID.test(caller)) {
      unitFor(caller).files.push({ path: f.path, role: "subagent" });
    }
  }
  return [...units.values()];
}
