/**
 * Codex discovery: every CODEX_HOME given walks `sessions/YYYY/MM/DD/` and the flat
 * `archived_sessions/` for `rollout-*.jsonl` and `rollout-*.jsonl.zst` (FORMAT.md §1:
 * date dirs and filename stamp are local time; the archive is believed flat [unc], so
 * date dirs are accepted there too). One unit per THREAD, keyed `codex:<thread-id>`: the
 * id is the filename's trailing UUID (fallback: the first line's session_meta
 * `payload.id`, then `session_id`), so an archive move, an unarchive or a move between
 * homes keeps the key. Tie-breaks, each counted:
 * - `x.jsonl` next to `x.jsonl.zst`: the plain file wins [src: rollout/compression.rs];
 * - one thread in two places (a leased-home copy): plain before compressed, then the
 *   newest mtime, then the path (deterministic).
 * Refusals, counted: rollout-named entries that are not regular files (symlinks, FIFOs,
 * directories), symlinked date directories (never followed), unreadable directories.
 * Bounded: at most `maxEntries` directory entries per home; a cut walk is counted.
 * A missing home or tree is "not present": no units, no error.
 */
import { join, relative } from "node:path";
import { statSource } from "../../cursor.ts";
import { readHead } from "./codex_source.ts";
import { lineText, splitCompleteLines } from "../../../durable/mod.ts";
import {
  countSkip,
  createWalkBudget,
  type Discovery,
  listDirBounded,
  type SessionUnit,
  type SkipReason,
  type WalkBudget,
} from "../framework/plugin.ts";

/** Directory entries visited per home before the walk is cut. */
export const MAX_WALK_ENTRIES = 200_000;
/** Bytes read to find a session_meta when the filename carries no UUID. */
const META_PROBE_BYTES = 1024 * 1024;

const ROLLOUT_NAME = /^rollout-.*\.jsonl(\.zst)?$/;
const UUID_TAIL =
  /([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})\.jsonl(?:\.zst)?$/i;
const UUID_ONLY = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const DATE_PART = /^\d{1,4}$/;
/** sessions/YYYY/MM/DD: rollouts sit at most three directories below a tree root. */
const MAX_DEPTH = 3;

/** What discovery tells extract() about a unit (SessionUnit.hint). */
export interface CodexHint {
  home: string;
  /** Path relative to the home (locator `file`). */
  rel: string;
}

interface Candidate {
  home: string;
  path: string;
  zst: boolean;
}

/** Walks every home and returns one unit per thread id. */
export async function discoverCodex(
  homes: readonly string[],
  o: { maxEntries?: number } = {},
): Promise<Discovery> {
  const maxEntries = o.maxEntries ?? MAX_WALK_ENTRIES;
  if (!Number.isSafeInteger(maxEntries) || maxEntries <= 0) {
    throw new RangeError(`Option "maxEntries" must be a positive integer: got ${maxEntries}`);
  }
  const skipped: Record<string, number> = {};
  const found: Candidate[] = [];
  for (const home of new Set(homes)) {
    const budget = createWalkBudget(maxEntries);
    for (const tree of ["sessions", "archived_sessions"]) {
      await walk(join(home, tree), 0, { home, budget, found, skipped });
    }
    // Counted once per home: the cut says "this home was not walked whole".
    if (budget.cut) countSkip(skipped, "walk_truncated" satisfies SkipReason);
  }
  const plain = new Set(found.filter((c) => !c.zst).map((c) => c.path));
  const byThread = new Map<string, Candidate[]>();
  for (const c of found) {
    if (c.zst && plain.has(c.path.slice(0, -".zst".length))) {
      countSkip(skipped, "zst_shadowed_by_plain");
      continue;
    }
    const id = await threadIdOf(c);
    if (id === null) {
      countSkip(skipped, "no_thread_id");
      continue;
    }
    byThread.set(id, [...(byThread.get(id) ?? []), c]);
  }
  const units: SessionUnit[] = [];
  for (const [id, cands] of byThread) {
    const pick = cands.length === 1 ? cands[0]! : await pickOne(cands);
    if (cands.length > 1) countSkip(skipped, "duplicate_thread", cands.length - 1);
    const hint: CodexHint = { home: pick.home, rel: relative(pick.home, pick.path) };
    units.push({
      source: "codex",
      sessionId: id,
      key: `codex:${id}`,
      files: [{ path: pick.path, role: pick.zst ? "rollout_zst" : "rollout" }],
      hint: { ...hint },
    });
  }
  units.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  return { units, skipped };
}

interface WalkCtx {
  home: string;
  budget: WalkBudget;
  found: Candidate[];
  skipped: Record<string, number>;
}

async function walk(dir: string, depth: number, w: WalkCtx): Promise<void> {
  if (w.budget.cut) return;
  // A missing tree is "not present"; anything else unreadable is counted, not thrown.
  const entries = await listDirBounded(dir, {
    budget: w.budget,
    skipped: w.skipped,
    counting: "none",
    unreadable: "any",
  });
  const subdirs: string[] = [];
  for (const e of entries ?? []) {
    const path = join(dir, e.name);
    if (ROLLOUT_NAME.test(e.name)) {
      if (e.isFile) w.found.push({ home: w.home, path, zst: e.name.endsWith(".zst") });
      else countSkip(w.skipped, "not_a_regular_file");
    } else if (DATE_PART.test(e.name) && depth < MAX_DEPTH) {
      if (e.isDirectory) subdirs.push(path);
      else if (e.isSymlink) countSkip(w.skipped, "symlinked_dir");
    }
  }
  // Listings are sorted, so a cut walk cuts the same entries every time.
  for (const d of subdirs) await walk(d, depth + 1, w);
}

async function threadIdOf(c: Candidate): Promise<string | null> {
  const m = UUID_TAIL.exec(c.path);
  if (m) return m[1]!.toLowerCase();
  return c.zst ? null : await metaIdOf(c.path);
}

/** The first complete line's session_meta id (`id`, else `session_id`), or null. */
async function metaIdOf(path: string): Promise<string | null> {
  try {
    const head = await readHead(path, META_PROBE_BYTES);
    const first = splitCompleteLines(head).lines[0];
    if (!first) return null;
    const raw = JSON.parse(lineText(head, first));
    const p = raw?.type === "session_meta" ? raw.payload : null;
    const id = typeof p?.id === "string" ? p.id : p?.session_id;
    if (typeof id !== "string" || id.length === 0 || id.length > 200) return null;
    return UUID_ONLY.test(id) ? id.toLowerCase() : id;
  } catch (err) {
    // Unreadable, swapped, or an unparsable first line: no id to key the thread on
    // (the caller counts it).
    if (!(err instanceof Error)) throw err;
    return null;
  }
}

/** Plain before compressed, then newest mtime, then path: deterministic. */
async function pickOne(cands: Candidate[]): Promise<Candidate> {
  const withTime = await Promise.all(
    cands.map(async (c) => ({ c, mtime: (await statSource(c.path))?.mtime_ms ?? 0 })),
  );
  withTime.sort((a, b) =>
    Number(a.c.zst) - Number(b.c.zst) || b.mtime - a.mtime ||
    (a.c.path < b.c.path ? -1 : a.c.path > b.c.path ? 1 : 0)
  );
  return withTime[0]!.c;
}
