/**
 * Qwen Code discovery: one session file = one unit, keyed `qwen:<sessionId>`.
 *
 * On-disk facts (FORMAT.md §1, [src] `config/storage.ts` `getRuntimeBaseDir`,
 * `getProjectDir`; `sessionService.ts` `SESSION_FILE_PATTERN`): sessions live at
 * `<runtimeBase>/projects/<sanitizeCwd(projectRoot)>/chats/<sessionId>.jsonl`, where the
 * runtime base is `$QWEN_RUNTIME_DIR`, else `$QWEN_HOME`, else `~/.qwen` (the wiring
 * passes every base that applies). `sanitizeCwd` (every non-alphanumeric → "-") is lossy,
 * so the project comes from the records' `cwd`, not the directory name. Only names
 * matching `^[0-9a-fA-F-]{32,36}\.jsonl$` are sessions (Qwen's own filter); other files
 * in chats/ (`<id>.runtime.json` sidecars…) are not transcripts. The session id is the
 * file name stem (Qwen names the file after it).
 * Invariants: a missing base, projects/ or chats/ is "not present"; the walk is bounded by
 * the framework walker (`walk_truncated`); symlinked directories are never followed
 * (`not_a_directory`); transcript-named non-files are refused (`not_a_regular_file`); a
 * session id seen under an earlier base wins (`duplicate_session_id`).
 * Errors: one unreadable directory is counted (`dir_unreadable`), never fatal.
 */
import { join } from "node:path";
import {
  countSkip,
  createWalkBudget,
  type Discovery,
  listDirBounded,
  type SessionUnit,
} from "../framework/plugin.ts";
import type { QwenLimits } from "./qwen_limits.ts";

const SESSION_FILE = /^([0-9a-fA-F-]{32,36})\.jsonl$/;
const LOCATOR_FILE_MAX = 512;

/** Walks every runtime base. */
export async function discoverQwen(
  bases: readonly string[],
  limits: Pick<QwenLimits, "maxEntries">,
): Promise<Discovery> {
  const units: SessionUnit[] = [];
  const skipped: Record<string, number> = {};
  const budget = createWalkBudget(limits.maxEntries);
  const ids = new Set<string>();
  const list = (dir: string) => listDirBounded(dir, { budget, skipped, unreadable: "any" });
  for (const base of new Set(bases)) {
    for (const p of (await list(join(base, "projects"))) ?? []) {
      if (p.isSymlink) countSkip(skipped, "not_a_directory");
      if (!p.isDirectory) continue;
      for (const f of (await list(join(base, "projects", p.name, "chats"))) ?? []) {
        const m = SESSION_FILE.exec(f.name);
        if (!m) continue;
        if (!f.isFile) {
          countSkip(skipped, "not_a_regular_file");
          continue;
        }
        const rel = `projects/${p.name}/chats/${f.name}`;
        if (rel.length > LOCATOR_FILE_MAX) countSkip(skipped, "path_too_long");
        else if (ids.has(m[1]!)) countSkip(skipped, "duplicate_session_id");
        else {
          ids.add(m[1]!);
          units.push({
            source: "qwen",
            sessionId: m[1]!,
            key: `qwen:${m[1]!}`,
            files: [{ path: join(base, "projects", p.name, "chats", f.name), role: "main" }],
            hint: { rel },
          });
        }
      }
    }
  }
  return { units, skipped };
}
