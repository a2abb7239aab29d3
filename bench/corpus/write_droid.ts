/**
 * Factory Droid sessions for the corpus through the fixture's DroidSessionWriter
 * (tests/helpers/fixtures/droid.ts, formats-more.md §5): `~/.factory/sessions/<"-" +
 * cwd with "/" → "-">/<id>.jsonl` beside `<id>.settings.json`; line 1 the session_start
 * summary, then `message` lines (the first prompt after Droid's `<system-reminder>`,
 * assistant thinking / text / tool_use blocks, tool_result user messages) and a
 * todo_state + compaction_state pair every 40 turns. Droid's rewind is a fork: a NEW
 * session whose `parent` names this one and that copies the messages up to the chosen
 * prompt (same ids), then goes on — written at a small fixed rate as a second session
 * (its copied prefix is indexed again under the fork's key, as Droid shows it).
 */
import { assistantMessages } from "./assistant_steps.ts";
import { DroidSessionWriter } from "../../tests/helpers/fixtures/droid.ts";
import { uuidFrom } from "../../tests/helpers/fixtures/copilot.ts";
import { lineEstimate, type SessionPlan, type TurnPlan } from "./plan.ts";
import { Rng } from "./rng.ts";
import type { ProseGen } from "./text.ts";
import { spreadClock, touch, type WrittenSession } from "./types.ts";

/** Share of the sessions (of at least four turns) that are forked by a rewind. */
export const DROID_FORK_RATE = 0.05;
/** Non-prose state lines every this many turns. */
const STATE_EVERY = 40;

/** Writes one session (and maybe its fork) under the Factory home `home`. */
export async function writeDroid(
  home: string,
  plan: SessionPlan,
  turns: TurnPlan[],
  prose: ProseGen,
): Promise<WrittenSession[]> {
  const rng = new Rng(plan.seed ^ 0xd401);
  const clock = spreadClock(plan.startMs, plan.endMs, lineEstimate(turns) + 12);
  let last = plan.startMs;
  const tick = () => (last = clock());
  const sessionId = uuidFrom(`bench:droid:${plan.index}`);
  const w = new DroidSessionWriter({
    sessionId,
    cwd: plan.project,
    clock: tick,
    title: turns[0]?.user.slice(0, 50),
  });
  for (let ti = 0; ti < turns.length; ti++) {
    const t = turns[ti]!;
    w.user(t.user);
    for (const { text, thinking, tool } of assistantMessages(t.steps)) {
      w.assistant(text, {
        thinking,
        ...(tool
          ? { tools: [{ name: "Execute", input: { command: tool.cmd }, result: tool.output }] }
          : {}),
      });
    }
    if (ti % STATE_EVERY === STATE_EVERY - 1) w.state();
  }
  const out = [await written(w, home, last)];
  if (turns.length >= 4 && rng.chance(DROID_FORK_RATE)) {
    // Rewind to the prompt of a middle turn: the fork keeps it and everything before.
    const prompts = w.prose.filter((p) => p.role === "user");
    const at = prompts[Math.floor(prompts.length / 2)]!;
    const fork = w.fork(uuidFrom(`bench:droid-fork:${plan.index}`), at.id);
    fork.assistant(prose.message(rng, 160), { thinking: true });
    fork.user(prose.message(rng, 50));
    fork.assistant(prose.message(rng, 120));
    out.push(await written(fork, home, last));
  }
  return out;
}

async function written(w: DroidSessionWriter, home: string, ms: number): Promise<WrittenSession> {
  const path = await w.write(home);
  await touch(path, ms);
  await touch(path.replace(/\.jsonl$/, ".settings.json"), ms);
  return {
    source: "droid",
    key: `droid:${w.o.sessionId}`,
    files: [path],
    bytes: (await Deno.stat(path)).size,
    messages: w.prose.length,
  };
}
