/**
 * Claude Code discovery: walks `<CLAUDE_CONFIG_DIR>/projects` roots and joins transcripts
 * into one unit per session uuid across the WHOLE corpus (every root, every project dir).
 *
 * On-disk facts (formats.md §2.1): main transcript `<projects>/<encoded-cwd>/<uuid>.jsonl`;
 * subagents `<projects>/<any-project-dir>/<uuid>/subagents/agent-<agentId>.jsonl` (+ an
 * `agent-<agentId>.meta.json` sidecar, ignored) — after a worktree relocation or volume
 * alias the `<uuid>/` dir can sit under another project dir than its main file; older CC
 * sidechains `agent-<agentId>.jsonl` directly in a project dir belong to the session named
 * by their rows' `sessionId` (the first complete row is read, and cached by file identity).
 * Refusals, each counted: `.jsonl.bak`/`.jsonl.backup`/`*.bak-*` siblings (only the exact
 * `.jsonl` suffix is a transcript), non-regular files (symlinks, FIFOs, directories with a
 * transcript name), unexpected names, harness agents (`agent-acompact-*` re-emits the
 * whole conversation to summarize it; `agent-aprompt_suggestion-*` is harness-generated),
 * hardlinked twins (same dev+ino under two paths: read once, first path in walk order),
 * a second main file for a session uuid (the first in walk order wins). A session whose
 * main file is missing still yields a unit from its subagent files. The walk is bounded
 * (`maxEntries` directory entries); what the bound cuts is counted, never thrown.
 */
import { join } from "node:path";
import { type Increment, readIncrement, statSource } from "../../cursor.ts";
import type { FileCursor } from "../../cursor_types.ts";
import { lineText } from "../../../durable/mod.ts";
import {
  countSkip,
  createWalkBudget,
  listDirBounded,
  type SessionUnit,
  type WalkBudget,
} from "../framework/plugin.ts";

/** Directory entries visited per discovery at most. */
export const MAX_DISCOVERY_ENTRIES = 200_000;
/** Leading rows read to find an old sidechain file's sessionId. */
const SIDECHAIN_PROBE_ROWS = 8;
/** Sidechain identities remembered process-wide (extractors are rebuilt every sweep). */
const SIDECHAIN_CACHE_MAX = 50_000;
const SESSION_ID = /^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/;
const AGENT_ID = /^agent-([A-Za-z0-9_-]{1,128})\.jsonl$/;
const HARNESS_AGENT = /^agent-a(compact|prompt_suggestion)[-_]/;
const BACKUP = /\.jsonl\.|\.bak(-|\.|$)|\.backup/;

interface Candidate {
  path: string;
  kind: "main" | "subagent" | "sidechain";
  sessionId: string | null;
  agentId: string | null;
  dev: number;
  ino: number;
}

/** What discovery returns beyond the units. */
export interface ClaudeDiscovery {
  units: SessionUnit[];
  skipped: Record<string, number>;
  /** Session ids that have a main transcript (for resume-replay detection). */
  mainSessions: Set<string>;
}

/** Sidechain path → the session its rows name, keyed by file identity. */
export type SidechainCache = Map<string, { dev: number; ino: number; sessionId: string }>;

/**
 * Shared by every extractor instance: a sidechain's first row never changes (append-only),
 * so its session is read once per process. Validated by dev+ino; bounded (oldest dropped).
 */
export const SIDECHAIN_CACHE: SidechainCache = new Map();

/** Walks `roots` and joins transcripts by session uuid. */
export async function discoverClaude(
  roots: readonly string[],
  o: { maxEntries: number; cache: SidechainCache },
): Promise<ClaudeDiscovery> {
  const skipped: Record<string, number> = {};
  const budget = createWalkBudget(o.maxEntries);
  const found: Candidate[] = [];
  for (const root of roots) {
    for (const proj of await list(root, budget, skipped)) {
      if (proj.isSymlink) countSkip(skipped, "not_a_regular_file");
      if (!proj.isDirectory) continue;
      await walkProject(join(root, proj.name), budget, skipped, found);
    }
  }
  const live = new Set<string>();
  const bySession = new Map<string, { main: Candidate | null; subs: Candidate[] }>();
  const identities = new Set<string>();
  for (const c of found) {
    const id = `${c.dev}:${c.ino}`;
    if (identities.has(id)) {
      countSkip(skipped, "hardlink_twin");
      continue;
    }
    identities.add(id);
    if (c.kind === "sidechain") {
      live.add(c.path);
      c.sessionId = await sidechainSession(c, o.cache, skipped);
    }
    if (c.sessionId === null) continue;
    const s = bySession.get(c.sessionId) ?? { main: null, subs: [] };
    bySession.set(c.sessionId, s);
    if (c.kind !== "main") s.subs.push(c);
    else if (s.main) countSkip(skipped, "duplicate_main_transcript");
    else s.main = c;
  }
  for (const p of o.cache.keys()) {
    if (o.cache.size <= SIDECHAIN_CACHE_MAX) break;
    if (!live.has(p)) o.cache.delete(p);
  }
  const units: SessionUnit[] = [];
  const mainSessions = new Set<string>();
  for (const [sessionId, s] of bySession) {
    if (s.main) mainSessions.add(sessionId);
    const subs = [...s.subs].sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
    units.push({
      source: "claude-code",
      sessionId,
      key: `claude-code:${sessionId}`,
      files: [
        ...(s.main ? [{ path: s.main.path, role: "main" }] : []),
        ...subs.map((c) => ({ path: c.path, role: `subagent:${c.agentId}` })),
      ],
    });
  }
  return { units, skipped, mainSessions };
}

async function walkProject(
  dir: string,
  budget: WalkBudget,
  skipped: Record<string, number>,
  found: Candidate[],
): Promise<void> {
  for (const e of await list(dir, budget, skipped)) {
    const path = join(dir, e.name);
    if (e.name.includes(".jsonl") && BACKUP.test(e.name)) {
      countSkip(skipped, "backup_sibling");
    } else if (e.name.endsWith(".jsonl")) {
      const stem = e.name.slice(0, -".jsonl".length);
      if (SESSION_ID.test(stem)) await candidate(path, "main", stem, null, skipped, found);
      else if (HARNESS_AGENT.test(e.name)) countSkip(skipped, "harness_agent");
      else if (AGENT_ID.test(e.name)) {
        await candidate(path, "sidechain", null, AGENT_ID.exec(e.name)![1]!, skipped, found);
      } else countSkip(skipped, "unexpected_name");
    } else if (e.isSymlink && SESSION_ID.test(e.name)) {
      countSkip(skipped, "not_a_regular_file");
    } else if (e.isDirectory && SESSION_ID.test(e.name)) {
      if (!(await isRealDir(join(path, "subagents"), skipped))) continue;
      for (const s of await list(join(path, "subagents"), budget, skipped)) {
        const sub = join(path, "subagents", s.name);
        if (s.name.includes(".jsonl") && BACKUP.test(s.name)) countSkip(skipped, "backup_sibling");
        else if (!s.name.endsWith(".jsonl")) continue; // meta.json sidecars, notes
        else if (HARNESS_AGENT.test(s.name)) countSkip(skipped, "harness_agent");
        else if (!AGENT_ID.test(s.name)) countSkip(skipped, "unexpected_name");
        else {
          await candidate(sub, "subagent", e.name, AGENT_ID.exec(s.name)![1]!, skipped, found);
        }
      }
    }
  }
}

async function candidate(
  path: string,
  kind: Candidate["kind"],
  sessionId: string | null,
  agentId: string | null,
  skipped: Record<string, number>,
  found: Candidate[],
): Promise<void> {
  const st = await statSource(path);
  if (st === null) return; // Vanished since the listing.
  if (st.kind !== "file") {
    countSkip(skipped, "not_a_regular_file");
    return;
  }
  found.push({ path, kind, sessionId, agentId, dev: st.dev, ino: st.ino });
}

/** True for a directory that is not a symlink (never followed); a symlink is counted. */
async function isRealDir(path: string, skipped: Record<string, number>): Promise<boolean> {
  try {
    const st = await Deno.lstat(path);
    if (st.isSymlink) countSkip(skipped, "not_a_regular_file");
    return st.isDirectory;
  } catch (err) {
    if (err instanceof Deno.errors.NotFound || err instanceof Deno.errors.NotADirectory) {
      return false;
    }
    throw err;
  }
}

/** Sorted entries of `dir`; [] when missing. Counts the entries a spent budget cuts. */
async function list(
  dir: string,
  budget: WalkBudget,
  skipped: Record<string, number>,
): Promise<Deno.DirEntry[]> {
  return (await listDirBounded(dir, { budget, skipped, counting: "each" })) ?? [];
}

async function sidechainSession(
  c: Candidate,
  cache: SidechainCache,
  skipped: Record<string, number>,
): Promise<string | null> {
  const hit = cache.get(c.path);
  if (hit && hit.dev === c.dev && hit.ino === c.ino) return hit.sessionId;
  let sessionId: string | null = null;
  try {
    // One complete row per read (maxBytes 1): the first row names the session.
    let from: FileCursor | null = null;
    for (let i = 0; i < SIDECHAIN_PROBE_ROWS && sessionId === null; i++) {
      const inc: Increment = await readIncrement(c.path, from, { maxBytes: 1 });
      for (const span of inc.lines) {
        let row: unknown;
        try {
          row = JSON.parse(lineText(inc.bytes, span, inc.baseOffset));
        } catch {
          // A malformed leading row: the next complete one may name the session.
          continue;
        }
        const sid = (row as { sessionId?: unknown } | null)?.sessionId;
        if (typeof sid === "string" && SESSION_ID.test(sid)) sessionId = sid;
      }
      if (inc.complete || inc.cursor.offset === from?.offset) break;
      from = inc.cursor;
    }
  } catch (err) {
    if (!(err instanceof Error)) throw err;
    countSkip(skipped, "sidechain_unreadable");
    return null;
  }
  if (sessionId === null) countSkip(skipped, "sidechain_session_unknown");
  else cache.set(c.path, { dev: c.dev, ino: c.ino, sessionId });
  return sessionId;
}
