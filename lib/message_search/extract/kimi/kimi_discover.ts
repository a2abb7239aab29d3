/**
 * Kimi Code session discovery. Layout (formats.md §3.1 [src]):
 *   <KIMI_CODE_HOME>/sessions/<workspace-bucket>/<sessionId>/
 *     state.json                metadata (read by extract, not cursor-tracked)
 *     agents/main/wire.jsonl    the main agent's journal
 *     agents/<agent-id>/wire.jsonl  sub-agents (agent-0, agent-1, …); nested agent dirs
 *                                    are accepted as kimi-code's own indexer does
 *     wire.jsonl                legacy root wire, read as agent "main" (ids "main@root:…")
 * The directory is the truth: session_index.jsonl is never read (it is navigation state
 * and may name deleted or foreign dirs).
 *
 * Bounds: one directory-entry budget for listing buckets and sessions; only the newest
 * `maxSessions` sessions (by the newest mtime of the session dir, its state.json and its
 * main wire; state.json is rewritten whenever kimi-code bumps `updatedAt`, and a stat is
 * far cheaper than parsing every candidate's JSON on each sweep) are considered; each
 * session's agent walk has its own entry budget. Everything cut is counted. A session
 * whose wires already break a size bound (file > wire cap, total > session cap, more
 * wires than the agent cap, a path too long for a locator) is still yielded, flagged
 * `blocked`, so extract retracts anything published before instead of serving it as
 * "gone"; the reason is counted here so coverage shows it.
 * Refused (counted): symlinks, FIFOs and directories named wire.jsonl, symlinked
 * buckets/session dirs, names outside the id grammar, duplicate session ids.
 */
import { join, relative } from "node:path";
import { statSource } from "../../cursor.ts";
import {
  countSkip,
  createWalkBudget,
  type Discovery,
  listDirBounded,
  type SessionUnit,
  type SkipReason,
  type WalkBudget,
} from "../framework/plugin.ts";
import { KIMI_AGENT_DIR_MAX_DEPTH, type KimiBlockReason, type KimiLimits } from "./kimi_limits.ts";

/** Facts discovery hands to extract through `SessionUnit.hint`. */
export interface KimiUnitHint {
  home: string;
  dir: string;
  blocked: KimiBlockReason | null;
}

/** Id qualifier of a legacy root wire (not a valid agent dir name, so it cannot collide). */
export const ROOT_WIRE_AGENT = "main@root";
const WIRE = "wire.jsonl";
const SESSION_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;
const AGENT_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;
/** Agent side directories that hold no transcript (formats.md §3.1). */
const NOT_AGENT_DIRS = new Set(["plans", "logs"]);
/** Locator `file` is at most 512 characters (locator.ts). */
const MAX_REL_PATH = 512;
/** Entries one session's agent walk may visit, per allowed agent. */
const WALK_ENTRIES_PER_AGENT = 16;

interface Candidate {
  home: string;
  dir: string;
  id: string;
  recency: number;
}

interface Wire {
  path: string;
  agent: string;
  size: number;
}

/** Discovers the sessions under every home (a missing home is simply not present). */
export async function discoverKimi(
  homes: readonly string[],
  limits: KimiLimits,
): Promise<Discovery> {
  const skipped: Record<string, number> = {};
  const budget = createWalkBudget(limits.maxDirEntries);
  const candidates: Candidate[] = [];
  for (const home of homes) {
    for (const bucket of await listDirs(join(home, "sessions"), budget, skipped)) {
      for (const id of await listDirs(bucket.path, budget, skipped)) {
        if (!SESSION_NAME.test(id.name)) countSkip(skipped, "bad_session_name");
        else candidates.push({ home, dir: id.path, id: id.name, recency: 0 });
      }
    }
  }
  for (const c of candidates) c.recency = await recencyOf(c.dir);
  candidates.sort((a, b) => b.recency - a.recency || (a.dir < b.dir ? -1 : 1));
  if (candidates.length > limits.maxSessions) {
    countSkip(skipped, "beyond_newest_sessions", candidates.length - limits.maxSessions);
  }
  const units: SessionUnit[] = [];
  const seen = new Set<string>();
  for (const c of candidates.slice(0, limits.maxSessions)) {
    if (seen.has(c.id)) {
      countSkip(skipped, "duplicate_session_id");
      continue;
    }
    const unit = await unitOf(c, limits, skipped);
    if (!unit) continue;
    seen.add(c.id);
    units.push(unit);
  }
  return { units, skipped };
}

async function unitOf(
  c: Candidate,
  limits: KimiLimits,
  skipped: Record<string, number>,
): Promise<SessionUnit | null> {
  const walk = { left: limits.maxAgents * WALK_ENTRIES_PER_AGENT, cut: false };
  const wires = await collectWires(c.dir, limits, walk, skipped);
  if (wires.length === 0) {
    // Nothing to read (a session being created, or a walk cut before any wire): no unit.
    countSkip(skipped, walk.cut ? "too_many_agents" : "no_wire");
    return null;
  }
  let blocked: KimiBlockReason | null = null;
  const total = wires.reduce((n, w) => n + w.size, 0);
  if (walk.cut || wires.length > limits.maxAgents) blocked = "too_many_agents";
  else if (wires.some((w) => w.size > limits.maxWireBytes)) blocked = "oversized_wire";
  else if (total > limits.maxSessionBytes) blocked = "oversized_session";
  else if (wires.some((w) => relative(c.home, w.path).length > MAX_REL_PATH)) {
    blocked = "path_too_long";
  }
  if (blocked) countSkip(skipped, blocked);
  const hint: KimiUnitHint = { home: c.home, dir: c.dir, blocked };
  return {
    source: "kimi",
    sessionId: c.id,
    key: `kimi:${c.id}`,
    files: wires.slice(0, limits.maxAgents + 1).map((w) => ({
      path: w.path,
      role: `agent:${w.agent}`,
    })),
    hint: { ...hint },
  };
}

/** The session's wires, main first, then the legacy root wire, then sub-agents by name. */
async function collectWires(
  dir: string,
  limits: KimiLimits,
  walk: { left: number; cut: boolean },
  skipped: Record<string, number>,
): Promise<Wire[]> {
  const wires: Wire[] = [];
  const root = await statWire(join(dir, WIRE), skipped);
  if (root?.kind === "other") countSkip(skipped, "not_a_regular_file");
  else if (root) wires.push({ path: join(dir, WIRE), agent: ROOT_WIRE_AGENT, size: root.size });
  const agents = join(dir, "agents");
  const st = await lstatOrNull(agents);
  if (st && (!st.isDirectory || st.isSymlink)) countSkip(skipped, "not_a_directory");
  else if (st) await walkAgents(agents, [], wires, limits, walk, skipped);
  const rank = (a: string) => (a === "main" ? 0 : a === ROOT_WIRE_AGENT ? 1 : 2);
  return wires.sort((a, b) =>
    rank(a.agent) - rank(b.agent) ||
    a.agent.localeCompare(b.agent, "en", { numeric: true })
  );
}

async function walkAgents(
  dir: string,
  rel: string[],
  wires: Wire[],
  limits: KimiLimits,
  walk: { left: number; cut: boolean },
  skipped: Record<string, number>,
): Promise<void> {
  const entries: Deno.DirEntry[] = [];
  try {
    for await (const e of Deno.readDir(dir)) {
      if (walk.left-- <= 0 || wires.length > limits.maxAgents) {
        walk.cut = true;
        return;
      }
      entries.push(e);
    }
  } catch (err) {
    // An agent dir removed mid-walk holds no wire any more; an unreadable one is counted.
    if (err instanceof Deno.errors.NotFound) return;
    if (err instanceof Deno.errors.PermissionDenied) {
      return countSkip(skipped, "dir_unreadable" satisfies SkipReason);
    }
    throw err;
  }
  entries.sort((a, b) => (a.name < b.name ? -1 : 1));
  for (const e of entries) {
    const path = join(dir, e.name);
    if (e.name === WIRE) {
      const st = rel.length === 0 ? null : await statWire(path, skipped);
      if (rel.length === 0) countSkip(skipped, "wire_outside_agent_dir");
      else if (!st || st.kind !== "file") countSkip(skipped, "not_a_regular_file");
      else wires.push({ path, agent: rel.join("/"), size: st.size });
    } else if (e.isSymlink) {
      countSkip(skipped, "not_a_directory");
    } else if (e.isDirectory && !NOT_AGENT_DIRS.has(e.name)) {
      if (!AGENT_NAME.test(e.name)) countSkip(skipped, "bad_agent_dir");
      else if (rel.length < KIMI_AGENT_DIR_MAX_DEPTH) {
        await walkAgents(path, [...rel, e.name], wires, limits, walk, skipped);
      }
    }
    if (walk.cut) return;
  }
}

/** Real subdirectories of `dir` (a missing dir is empty); other entries are counted. */
async function listDirs(
  dir: string,
  budget: WalkBudget,
  skipped: Record<string, number>,
): Promise<{ name: string; path: string }[]> {
  // One unreadable directory must not hide every other session (counted by the walker).
  const entries = await listDirBounded(dir, { budget, skipped, counting: "once" });
  const out: { name: string; path: string }[] = [];
  for (const e of entries ?? []) {
    if (e.isDirectory && !e.isSymlink) out.push({ name: e.name, path: join(dir, e.name) });
    else countSkip(skipped, "not_a_directory" satisfies SkipReason);
  }
  return out;
}

/** Newest mtime of the session dir, its state.json and its main (or legacy root) wire. */
async function recencyOf(dir: string): Promise<number> {
  let best = 0;
  for (
    const p of [dir, join(dir, "state.json"), join(dir, "agents", "main", WIRE), join(dir, WIRE)]
  ) {
    const st = await lstatOrNull(p);
    const ms = st?.mtime?.getTime() ?? 0;
    if (ms > best) best = ms;
  }
  return best;
}

/** lstat; null when missing or unreadable (an unreadable path then yields no wire). */
async function lstatOrNull(path: string): Promise<Deno.FileInfo | null> {
  try {
    return await Deno.lstat(path);
  } catch (err) {
    if (
      err instanceof Deno.errors.NotFound || err instanceof Deno.errors.NotADirectory ||
      err instanceof Deno.errors.PermissionDenied
    ) return null;
    throw err;
  }
}

/** statSource; null when missing or unreadable (counted). */
async function statWire(
  path: string,
  skipped: Record<string, number>,
): Promise<Awaited<ReturnType<typeof statSource>>> {
  try {
    return await statSource(path);
  } catch (err) {
    if (!(err instanceof Deno.errors.PermissionDenied)) throw err;
    countSkip(skipped, "permission_denied");
    return null;
  }
}
