/**
 * Gemini CLI discovery: finds session files under each `.gemini` directory and reads just
 * their metadata to name the unit. One file = one unit, keyed `gemini:<sessionId>`.
 *
 * On-disk facts (formats-more.md §1.1, [src] gemini-cli @5411f11 `config/storage.ts`,
 * `chatRecordingService.ts` `initialize`, cli `utils/sessionUtils.ts`):
 * - `<gemini>/tmp/<projectId>/chats/session-<UTC YYYY-MM-DDTHH-MM>-<sid[0,8)>.jsonl`
 *   (main; line 1 = `{sessionId, projectHash, startTime, lastUpdated, kind?}`), the
 *   legacy whole-file `.json` of the same name (pretty-printed, `sessionId` first), and
 *   subagents at `chats/<parentSessionId>/<agentId>.jsonl` (`kind: "subagent"`,
 *   `sessionId` = the agent id). `<projectId>` is a slug (current) or the sha256 of the
 *   project root (older); the CLI lists only `session-*.json[l]` names.
 * - cwd: `tmp/<projectId>/.project_root` (slug dirs), else the reverse of
 *   `<gemini>/projects.json` `{projects: {<root>: <slug>}}`, else unknown (hash dirs).
 * - `X.json` next to `X.jsonl` is the pre-migration twin of the same session: the JSONL
 *   is canonical, the twin is counted (`legacy_twin`) and not read.
 * - Never transcripts (never opened): logs.json, checkpoint-*.json, tool-outputs/,
 *   `*.unreadable-<ms>`, `*.tmp-<pid>`.
 * Invariants: a missing `.gemini`, `tmp/` or `chats/` is "not present"; the walk is
 * bounded by the framework walker (`walk_truncated`); symlinked directories are never
 * followed (`not_a_directory`), transcript-named non-files are refused
 * (`not_a_regular_file`); a file whose metadata cannot be read yet is counted
 * (`header_pending` / `header_invalid`); a second file claiming a session id already seen
 * is counted (`duplicate_session_id`, first in walk order wins). Metadata reads are cached
 * by file signature (dev, ino, size, mtime).
 * Errors: one unreadable file or directory is counted, never fatal to the walk.
 */
import { basename, join } from "node:path";
import { lineText } from "../../../durable/mod.ts";
import { readIncrement, readSourceRange, statSource } from "../../cursor.ts";
import {
  countSkip,
  createWalkBudget,
  type Discovery,
  listDirBounded,
  type SessionUnit,
  type WalkBudget,
} from "../framework/plugin.ts";
import { isMessageId } from "./gemini_events.ts";
import type { GeminiLimits } from "./gemini_limits.ts";
import { isObj } from "./gemini_prose.ts";

/** Extractor-private facts a unit carries (SessionUnit.hint). */
export interface GeminiHint {
  [key: string]: unknown;
  /** Locator `file`: path relative to the `.gemini` dir. */
  rel: string;
  format: "jsonl" | "json";
  /** The project root, when it can be recovered. */
  project: string | null;
  /** Parent session id (subagent files: their directory name). */
  parent: string | null;
  subagent: boolean;
}

/** A metadata read, or why the file is not (yet) a session. */
type HeaderRead = { ok: true; sessionId: string; subagent: boolean } | {
  ok: false;
  reason: string;
};

/** Metadata reads keyed by path, valid while the file's signature holds. */
export type GeminiHeaderCache = Map<string, { sig: string; read: HeaderRead }>;

const LOCATOR_FILE_MAX = 512;
const MAIN_NAME = /^session-.+\.jsonl?$/;
const LEGACY_SESSION_ID = /^\s*\{\s*"sessionId"\s*:\s*"((?:[^"\\]|\\.){1,512})"/;

/** Reads a JSONL session's line 1. */
async function readJsonlHeader(path: string, maxHeaderBytes: number): Promise<HeaderRead> {
  const inc = await readIncrement(path, null, { maxBytes: 1, maxLineBytes: maxHeaderBytes });
  if (inc.oversizedLines.some((l) => l.lineNo === 1)) {
    return { ok: false, reason: "header_invalid" };
  }
  const first = inc.lines[0];
  if (!first) return { ok: false, reason: "header_pending" }; // Torn first line: next sweep.
  let raw: unknown;
  try {
    raw = JSON.parse(lineText(inc.bytes, first, inc.baseOffset));
  } catch {
    // Not JSON: Gemini itself could not load it either.
    return { ok: false, reason: "header_invalid" };
  }
  if (!isObj(raw) || !isMessageId(raw.sessionId) || typeof raw.projectHash !== "string") {
    return { ok: false, reason: "header_invalid" };
  }
  return { ok: true, sessionId: raw.sessionId, subagent: raw.kind === "subagent" };
}

/** Reads a legacy `.json` session's id from its first bytes (`sessionId` is written first). */
async function readJsonHeader(path: string, maxHeaderBytes: number): Promise<HeaderRead> {
  const bytes = await readSourceRange(path, 0, maxHeaderBytes, { expected: null });
  const m = LEGACY_SESSION_ID.exec(new TextDecoder().decode(bytes));
  if (!m) return { ok: false, reason: bytes.length === 0 ? "header_pending" : "header_invalid" };
  let id: unknown;
  try {
    id = JSON.parse(`"${m[1]}"`);
  } catch {
    // A broken escape in the id: not a session Gemini could resume either.
    return { ok: false, reason: "header_invalid" };
  }
  if (!isMessageId(id)) return { ok: false, reason: "header_invalid" };
  const subagent = /"kind"\s*:\s*"subagent"/.test(new TextDecoder().decode(bytes));
  return { ok: true, sessionId: id, subagent };
}

async function readHeader(path: string, json: boolean, max: number): Promise<HeaderRead> {
  try {
    return json ? await readJsonHeader(path, max) : await readJsonlHeader(path, max);
  } catch (err) {
    if (err instanceof Deno.errors.NotFound) return { ok: false, reason: "vanished" };
    if (!(err instanceof Error)) throw err;
    // ContainmentError (symlink or FIFO swapped in), EACCES, EIO: this file only is lost.
    return {
      ok: false,
      reason: err.name === "ContainmentError" ? "not_a_regular_file" : "unreadable",
    };
  }
}

/**
 * Small-file reads keyed by path, valid while the file's signature (dev, ino, size,
 * mtime) holds, like the header cache: a no-op sweep stats `projects.json` and each
 * `.project_root` but opens neither. Bounded: cleared when it outgrows SMALL_READS_MAX.
 */
const SMALL_READS = new Map<string, { sig: string; text: string | null }>();
const SMALL_READS_MAX = 10_000;

/** A small text file's content (`.project_root`, `projects.json`), or null. */
async function readSmall(path: string, max: number): Promise<string | null> {
  const st = await statSource(path);
  if (st === null || st.kind !== "file" || st.size > max) {
    SMALL_READS.delete(path);
    return null;
  }
  const sig = `${st.dev}:${st.ino}:${st.size}:${st.mtime_ms}`;
  const hit = SMALL_READS.get(path);
  if (hit?.sig === sig) return hit.text;
  let text: string | null;
  try {
    text = new TextDecoder("utf-8", { fatal: true }).decode(
      await readSourceRange(path, 0, max, { expected: st }),
    );
  } catch (err) {
    if (!(err instanceof Error)) throw err;
    text = null; // Unreadable, swapped or not UTF-8: the cwd is simply unknown.
  }
  if (SMALL_READS.size >= SMALL_READS_MAX) SMALL_READS.clear();
  SMALL_READS.set(path, { sig, text });
  return text;
}

/** slug → project root from `<gemini>/projects.json`. */
async function readRegistry(geminiDir: string, max: number): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  const text = await readSmall(join(geminiDir, "projects.json"), max);
  if (text === null) return out;
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch {
    // A registry mid-write or damaged: cwd recovery falls back to .project_root only.
    return out;
  }
  if (!isObj(raw) || !isObj(raw.projects)) return out;
  for (const [root, slug] of Object.entries(raw.projects)) {
    if (typeof slug === "string" && root.startsWith("/") && !out.has(slug)) out.set(slug, root);
  }
  return out;
}

async function projectOf(
  projectDir: string,
  slug: string,
  registry: Map<string, string>,
  max: number,
): Promise<string | null> {
  const marker = (await readSmall(join(projectDir, ".project_root"), max))?.trim();
  if (marker && marker.startsWith("/") && !marker.includes("\n")) return marker;
  return registry.get(slug) ?? null;
}

interface WalkCtx {
  limits: GeminiLimits;
  cache: GeminiHeaderCache;
  next: GeminiHeaderCache;
  skipped: Record<string, number>;
  budget: WalkBudget;
  ids: Set<string>;
  units: SessionUnit[];
}

/** Walks every `.gemini` dir; returns the units and the refreshed metadata cache. */
export async function discoverGemini(
  geminiDirs: readonly string[],
  limits: GeminiLimits,
  cache: GeminiHeaderCache,
): Promise<{ discovery: Discovery; cache: GeminiHeaderCache }> {
  const w: WalkCtx = {
    limits,
    cache,
    next: new Map(),
    skipped: {},
    budget: createWalkBudget(limits.maxEntries),
    ids: new Set(),
    units: [],
  };
  const list = (dir: string) =>
    listDirBounded(dir, { budget: w.budget, skipped: w.skipped, unreadable: "any" });
  for (const g of new Set(geminiDirs)) {
    const registry = await readRegistry(g, limits.maxRegistryBytes);
    for (const p of (await list(join(g, "tmp"))) ?? []) {
      if (p.isSymlink) countSkip(w.skipped, "not_a_directory");
      if (!p.isDirectory) continue; // tmp/ also holds plain files (bin caches…).
      const projectDir = join(g, "tmp", p.name);
      const chats = await list(join(projectDir, "chats"));
      if (chats === null) continue;
      const project = await projectOf(projectDir, p.name, registry, limits.maxHeaderBytes);
      const names = new Set(chats.map((e) => e.name));
      for (const e of chats) {
        const rel = `tmp/${p.name}/chats/${e.name}`;
        const path = join(projectDir, "chats", e.name);
        if (MAIN_NAME.test(e.name)) {
          if (!e.isFile) countSkip(w.skipped, "not_a_regular_file");
          else if (e.name.endsWith(".json") && names.has(`${e.name}l`)) {
            countSkip(w.skipped, "legacy_twin");
          } else await addUnit(w, path, rel, { project, parent: null });
        } else if (e.isSymlink) countSkip(w.skipped, "not_a_directory");
        else if (e.isDirectory) {
          // chats/<parentSessionId>/<agentId>.jsonl: subagents of that session.
          for (const s of (await list(path)) ?? []) {
            if (!s.name.endsWith(".jsonl")) continue;
            if (!s.isFile) countSkip(w.skipped, "not_a_regular_file");
            else {
              await addUnit(w, join(path, s.name), `${rel}/${s.name}`, {
                project,
                parent: e.name,
              });
            }
          }
        }
      }
    }
  }
  return { discovery: { units: w.units, skipped: w.skipped }, cache: w.next };
}

async function addUnit(
  w: WalkCtx,
  path: string,
  rel: string,
  o: { project: string | null; parent: string | null },
): Promise<void> {
  if (rel.length > LOCATOR_FILE_MAX) return countSkip(w.skipped, "path_too_long");
  const st = await statSource(path);
  if (st === null) return; // Raced away since the listing.
  if (st.kind !== "file") return countSkip(w.skipped, "not_a_regular_file");
  const json = path.endsWith(".json");
  const sig = `${st.dev}:${st.ino}:${st.size}:${st.mtime_ms}`;
  const hit = w.cache.get(path);
  const read = hit?.sig === sig ? hit.read : await readHeader(path, json, w.limits.maxHeaderBytes);
  w.next.set(path, { sig, read });
  if (!read.ok) {
    if (read.reason !== "vanished") countSkip(w.skipped, read.reason);
    return;
  }
  if (w.ids.has(read.sessionId)) return countSkip(w.skipped, "duplicate_session_id");
  w.ids.add(read.sessionId);
  // Older subagent files may sit directly in chats/: `kind` decides, not placement.
  const subagent = read.subagent || o.parent !== null;
  const hint: GeminiHint = {
    rel,
    format: json ? "json" : "jsonl",
    project: o.project,
    parent: o.parent,
    subagent,
  };
  w.units.push({
    source: "gemini",
    sessionId: read.sessionId,
    key: `gemini:${read.sessionId}`,
    files: [{ path, role: subagent ? "subagent" : json ? "legacy" : "main" }],
    hint,
  });
}

/** The unit's hint, narrowed (discovery always sets it; a foreign unit gets defaults). */
export function hintOf(unit: SessionUnit): GeminiHint {
  const h = unit.hint ?? {};
  const path = unit.files[0]?.path ?? "";
  return {
    rel: typeof h.rel === "string" ? h.rel : basename(path),
    format: h.format === "json" || path.endsWith(".json") ? "json" : "jsonl",
    project: typeof h.project === "string" ? h.project : null,
    parent: typeof h.parent === "string" ? h.parent : null,
    subagent: h.subagent === true,
  };
}
