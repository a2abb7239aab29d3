/**
 * Cursor CLI discovery (formats-more.md §4.1, [3p] agentsview cursor_provider.go,
 * deja-vu): one unit per chat, keyed `cursor:<chat id>`, under each Cursor config dir
 * given (`CURSOR_CONFIG_DIR`, else `~/.cursor`: the caller resolves it).
 * Layout: `<root>/projects/<encoded cwd>/agent-transcripts/` holding, per chat id X,
 * the nested `X/X.jsonl` or the flat `X.jsonl` (nested wins), else the legacy `.txt`
 * twin (`X/X.txt`, `X.txt`; a `.jsonl` always wins over it). Sub-agent transcripts in
 * `X/subagents/*.jsonl` [unc layout] join the chat's unit (role "subagent"): their prose
 * is flagged subagent under the parent chat. `chats/<md5>/<id>/store.db` is not read:
 * the transcripts carry the same prose (see cursor.ts).
 * The encoded project directory is lossy (every non-alphanumeric became "-"), so it is
 * kept as a hint only; no cwd is invented from it.
 * Invariants: missing dirs are "not present"; symlinks are never followed (counted);
 * the walk is budgeted and sorted; a chat id repeated in another project or root is
 * counted ("duplicate_session_id"), the first one wins.
 */
import { join } from "node:path";
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

/** A chat id as the CLI names its transcripts (a UUID in practice). */
const CHAT_ID = /^[A-Za-z0-9][A-Za-z0-9._-]{0,199}$/;

/** Discovery facts the extractor reads back. */
export interface CursorHint {
  /** The config dir the chat was found in. */
  root: string;
  /** The encoded project directory name (lossy; display only). */
  project_dir: string;
  /** "jsonl" or the legacy "txt". */
  format: "jsonl" | "txt";
}

interface Found {
  path: string;
  kind: "file" | "other";
}

async function fileAt(path: string): Promise<Found | null> {
  const st = await statSource(path);
  return st === null ? null : { path, kind: st.kind };
}

/** Lists every chat under `roots`. */
export async function discoverCursor(
  roots: readonly string[],
  o: { maxWalkEntries: number },
): Promise<Discovery> {
  const skipped: Record<string, number> = {};
  const budget = createWalkBudget(o.maxWalkEntries);
  const units: SessionUnit[] = [];
  const seen = new Set<string>();
  for (const root of roots) {
    const projects = await listDirBounded(join(root, "projects"), {
      budget,
      skipped,
      counting: "once",
    });
    for (const p of projects ?? []) {
      if (!p.isDirectory) continue;
      const dir = join(root, "projects", p.name, "agent-transcripts");
      for (const unit of await chatsIn(dir, { root, project: p.name, budget, skipped })) {
        if (seen.has(unit.sessionId)) {
          countSkip(skipped, "duplicate_session_id");
          continue;
        }
        seen.add(unit.sessionId);
        units.push(unit);
      }
    }
  }
  return { units, skipped };
}

async function chatsIn(
  dir: string,
  o: { root: string; project: string; budget: WalkBudget; skipped: Record<string, number> },
): Promise<SessionUnit[]> {
  const entries = await listDirBounded(dir, {
    budget: o.budget,
    skipped: o.skipped,
    counting: "once",
  });
  if (entries === null) return [];
  const ids = new Set<string>();
  for (const e of entries) {
    const m = /^(.*)\.(jsonl|txt)$/.exec(e.name);
    if (e.isDirectory) ids.add(e.name);
    else if (m) ids.add(m[1]!);
    else if (e.isSymlink) countSkip(o.skipped, "not_a_directory" satisfies SkipReason);
  }
  const units: SessionUnit[] = [];
  for (const id of [...ids].sort()) {
    if (!CHAT_ID.test(id)) {
      countSkip(o.skipped, "unexpected_name");
      continue;
    }
    const candidates = [
      join(dir, id, `${id}.jsonl`),
      join(dir, `${id}.jsonl`),
      join(dir, id, `${id}.txt`),
      join(dir, `${id}.txt`),
    ];
    let main: Found | null = null;
    for (const c of candidates) {
      const f = await fileAt(c);
      if (f === null) continue;
      if (f.kind !== "file") {
        countSkip(o.skipped, "not_a_regular_file" satisfies SkipReason);
        continue;
      }
      main = f;
      break;
    }
    if (main === null) continue;
    const files = [{ path: main.path, role: "main" }];
    const subs = await listDirBounded(join(dir, id, "subagents"), {
      budget: o.budget,
      skipped: o.skipped,
      counting: "once",
    });
    for (const s of subs ?? []) {
      if (!s.name.endsWith(".jsonl")) continue;
      if (!s.isFile) {
        countSkip(o.skipped, "not_a_regular_file" satisfies SkipReason);
        continue;
      }
      files.push({ path: join(dir, id, "subagents", s.name), role: "subagent" });
    }
    const hint: CursorHint = {
      root: o.root,
      project_dir: o.project,
      format: main.path.endsWith(".txt") ? "txt" : "jsonl",
    };
    units.push({ source: "cursor", sessionId: id, key: `cursor:${id}`, files, hint: { ...hint } });
  }
  return units;
}
