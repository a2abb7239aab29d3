/**
 * A machine with one Codex session 40 days old and one 2 days old, both saying the same
 * rare word, written in Codex's exact rollout format (tests/fixtures/codex_fixture.ts
 * RolloutWriter) with line timestamps and file mtimes set to the session's age: the
 * default 14-day window indexes the young one and skips the old one, which only archive
 * search finds.
 */
import { dirname, join } from "node:path";
import { rolloutRel, RolloutWriter, uuidv7 } from "../fixtures/codex_fixture.ts";

export const DAY_MS = 86_400_000;
/** Sweep the agent homes too (hermeticEnv sweeps only the intendant home by default). */
export const ARCHIVE_ENV = { INTENDANT_MESSAGE_SEARCH_DAEMON_HOME_ONLY: "no" };
/** The word both sessions say (rare: no other fixture has it). */
export const ARCHIVE_WORD = "zebrafinch";
export const OLD_PROMPT = `Where did we park the ${ARCHIVE_WORD} migration plan`;
export const YOUNG_PROMPT = `Resume the ${ARCHIVE_WORD} rollout checklist`;

/** The keys of the two sessions. */
export interface ArchiveWorld {
  oldKey: string;
  youngKey: string;
  oldPath: string;
}

async function writeSession(
  codexHome: string,
  o: { startMs: number; seed: string; prompt: string; answer: string },
): Promise<{ key: string; path: string }> {
  const id = uuidv7(o.startMs, o.seed);
  const w = new RolloutWriter(id, o.startMs, true);
  w.meta({ cwd: "/home/dev/birds", cli_version: "0.137.0" })
    .turnContext("/home/dev/birds")
    .user(o.prompt)
    .assistant([o.answer]);
  const path = join(codexHome, rolloutRel(o.startMs, id));
  await Deno.mkdir(dirname(path), { recursive: true });
  await Deno.writeFile(path, w.bytes());
  const at = new Date(o.startMs + 60_000);
  await Deno.utime(path, at, at);
  return { key: `codex:${id}`, path };
}

/** Writes both sessions into `codexHome` (CODEX_HOME). */
export async function buildArchiveWorld(
  codexHome: string,
  nowMs = Date.now(),
): Promise<ArchiveWorld> {
  const old = await writeSession(codexHome, {
    startMs: nowMs - 40 * DAY_MS,
    seed: "archive-old",
    prompt: OLD_PROMPT,
    answer: "It is in docs/plans/birds.md, section three.",
  });
  const young = await writeSession(codexHome, {
    startMs: nowMs - 2 * DAY_MS,
    seed: "archive-young",
    prompt: YOUNG_PROMPT,
    answer: "The checklist has four steps left.",
  });
  return { oldKey: old.key, youngKey: young.key, oldPath: old.path };
}
