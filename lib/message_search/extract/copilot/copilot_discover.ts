/**
 * Copilot CLI discovery (formats-more.md §3.1): one unit per session, keyed
 * `copilot:<session id>`, under each Copilot home given (COPILOT_HOME, `--config-dir`,
 * the legacy `$XDG_CONFIG_HOME/.copilot`, `~/.copilot`: the caller resolves them).
 * Layouts: `<home>/session-state/<id>/events.jsonl` (current; `workspace.yaml` beside it)
 * and the older flat `<home>/session-state/<id>.jsonl`; when both exist the directory
 * wins (as agentsview does). The pre-events `history-session-state/*.json` files are not
 * read (several readers dropped them; see the report). `session-store.db` is a derived
 * index, never a transcript.
 * The session id is the directory name (file stem when flat): `copilot --resume <id>`
 * takes it, and it needs no read. A name that is not a plain id is refused
 * ("unexpected_name"); the same id in a later home is counted ("duplicate_session_id").
 * Invariants: a missing home or session-state/ is "not present"; symlinks are never
 * followed (counted in the walker's vocabulary); the walk is budgeted; listings are
 * sorted, so a cut walk cuts the same entries every time.
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
} from "../framework/plugin.ts";

/** A session id as Copilot names it (UUID v4 in practice). */
const SESSION_ID = /^[A-Za-z0-9][A-Za-z0-9._-]{0,199}$/;

/** Discovery facts the extractor reads back. */
export interface CopilotHint {
  /** The Copilot home the session was found in. */
  home: string;
  /** Locator `file`: the transcript path relative to the home. */
  rel: string;
  /** `workspace.yaml` beside the transcript (directory layout only). */
  workspace: string | null;
}

/** Lists every session under `homes` (first home wins on a repeated id). */
export async function discoverCopilot(
  homes: readonly string[],
  o: { maxWalkEntries: number },
): Promise<Discovery> {
  const skipped: Record<string, number> = {};
  const budget = createWalkBudget(o.maxWalkEntries);
  const units: SessionUnit[] = [];
  const seen = new Set<string>();
  for (const home of homes) {
    const root = join(home, "session-state");
    const entries = await listDirBounded(root, { budget, skipped, counting: "once" });
    if (entries === null) continue;
    const dirs = new Set(entries.filter((e) => e.isDirectory).map((e) => e.name));
    for (const e of entries) {
      const flat = e.name.endsWith(".jsonl");
      const id = flat ? e.name.slice(0, -".jsonl".length) : e.name;
      if (!flat && !e.isDirectory) {
        if (e.isSymlink) countSkip(skipped, "not_a_directory" satisfies SkipReason);
        continue; // Other files of the store (session-store.db, locks) are not sessions.
      }
      if (flat && dirs.has(id)) continue; // The directory layout wins.
      if (!SESSION_ID.test(id)) {
        countSkip(skipped, "unexpected_name");
        continue;
      }
      const rel = flat ? `session-state/${e.name}` : `session-state/${id}/events.jsonl`;
      const path = join(home, rel);
      const st = await statSource(path);
      if (st === null) continue; // A session dir before its first event: nothing yet.
      if (st.kind !== "file") {
        countSkip(skipped, "not_a_regular_file" satisfies SkipReason);
        continue;
      }
      if (seen.has(id)) {
        countSkip(skipped, "duplicate_session_id");
        continue;
      }
      seen.add(id);
      const hint: CopilotHint = {
        home,
        rel,
        workspace: flat ? null : join(root, id, "workspace.yaml"),
      };
      units.push({
        source: "copilot",
        sessionId: id,
        key: `copilot:${id}`,
        files: [{ path, role: "events" }],
        hint: { ...hint },
      });
    }
  }
  return { units, skipped };
}

/** Reads the hint back (null fields when absent or of the wrong type). */
export function copilotHintOf(unit: SessionUnit): CopilotHint | null {
  const h = unit.hint;
  if (!h || typeof h.home !== "string" || typeof h.rel !== "string") return null;
  return {
    home: h.home,
    rel: h.rel,
    workspace: typeof h.workspace === "string" ? h.workspace : null,
  };
}
