/**
 * Gemini CLI sessions for the corpus through the fixture's GeminiSessionWriter
 * (tests/helpers/fixtures/gemini.ts, formats-more.md §1): `<.gemini>/tmp/<slug>/chats/
 * session-<stamp>-<sid8>.jsonl` (projects.json and `.project_root` for slug dirs; the
 * `/srv` projects in the older sha256 dirs), the metadata line, user and `gemini`
 * records each followed by the `$set.lastUpdated` Gemini writes, thoughts on the
 * replies, tool rounds (a `gemini` record with toolCalls upserted with its result, and
 * the functionResponse user record) and, at a small fixed rate, `/rewind`: a turn is
 * written, then `{"$rewindTo": <its prompt id>}` — its two or more messages stay in the
 * index, superseded, and count as written. (The checkpoint Gemini usually writes after
 * a rewind re-lists the whole history; it is left out: optional in the format, and a
 * rewind late in a huge session would write megabytes of it.)
 */
import {
  geminiProjectDir,
  GeminiSessionWriter,
  geminiUuid,
  writeGeminiSession,
} from "../../tests/helpers/fixtures/gemini.ts";
import { lineEstimate, type SessionPlan, type TurnPlan } from "./plan.ts";
import { Rng } from "./rng.ts";
import { spreadClock, touch, type WrittenSession } from "./types.ts";

/** Share of the turns (never the first) rewound right after being written. */
export const GEMINI_REWIND_RATE = 0.02;

/** Writes one session under the `.gemini` directory `geminiDir`. */
export async function writeGemini(
  geminiDir: string,
  plan: SessionPlan,
  turns: TurnPlan[],
): Promise<WrittenSession> {
  const rng = new Rng(plan.seed ^ 0x9e31);
  const clock = spreadClock(plan.startMs, plan.endMs, lineEstimate(turns) * 2 + 8);
  let last = plan.startMs;
  const tick = () => (last = clock());
  const sessionId = geminiUuid(`bench:${plan.index}`);
  const w = new GeminiSessionWriter({
    sessionId,
    projectRoot: plan.project,
    clock: tick,
    seed: `bench:${plan.index}`,
  });
  let messages = 0;
  for (let ti = 0; ti < turns.length; ti++) {
    const t = turns[ti]!;
    const prompt = w.user(t.user);
    messages++;
    let thoughts: Record<string, unknown>[] = [];
    for (const s of t.steps) {
      if (s.kind === "think") {
        thoughts.push({
          subject: s.text.slice(0, 40),
          description: s.text,
          timestamp: new Date(tick()).toISOString(),
        });
      } else if (s.kind === "tool") {
        w.toolRound("run_shell_command", { command: s.cmd }, s.output);
      } else {
        w.gemini(s.text, { thoughts });
        thoughts = [];
        messages++;
      }
    }
    if (ti > 0 && rng.chance(GEMINI_REWIND_RATE)) w.rewindTo(prompt);
  }
  const projectDir = await geminiProjectDir(
    geminiDir,
    plan.project,
    plan.project.startsWith("/srv/") ? "hash" : "slug",
  );
  const path = await writeGeminiSession(projectDir, w);
  await touch(path, last);
  return {
    source: "gemini",
    key: `gemini:${sessionId}`,
    files: [path],
    bytes: (await Deno.stat(path)).size,
    messages,
  };
}
