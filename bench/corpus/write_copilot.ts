/**
 * GitHub Copilot CLI sessions for the corpus through the fixture's CopilotSessionWriter
 * (tests/helpers/fixtures/copilot.ts, formats-more.md §3): `<COPILOT_HOME>/session-state/
 * <uuid>/events.jsonl` + `workspace.yaml`, one event envelope per line: session.start,
 * the system/info/model-change rows, user.message with the model-bound
 * transformedContent, assistant.turn_start / reasoning / message (toolRequests,
 * reasoningText) / tool.execution_start + complete / turn_end, a compaction every 60
 * turns. A rewind leaves no marker: the CLI drops the named event and every later one
 * and rewrites the file, so at a small fixed rate an abandoned turn (its own prose,
 * planting no needle) is written and then rewound away — the file holds only what
 * survived, which is what the index must hold.
 */
import { assistantMessages } from "./assistant_steps.ts";
import { dirname, join } from "node:path";
import { CopilotSessionWriter, uuidFrom } from "../../tests/helpers/fixtures/copilot.ts";
import { lineEstimate, type SessionPlan, type TurnPlan } from "./plan.ts";
import { Rng } from "./rng.ts";
import type { ProseGen } from "./text.ts";
import { spreadClock, touch, type WrittenSession } from "./types.ts";

/** Share of the turns (never the first) preceded by an abandoned, rewound-away turn. */
export const COPILOT_REWIND_RATE = 0.02;
/** A compaction every this many turns (its summary is never prose). */
const COMPACT_EVERY = 60;

/** Writes one session under the Copilot home `home`. */
export async function writeCopilot(
  home: string,
  plan: SessionPlan,
  turns: TurnPlan[],
  prose: ProseGen,
): Promise<WrittenSession> {
  const rng = new Rng(plan.seed ^ 0xc0b1);
  const clock = spreadClock(plan.startMs, plan.endMs, lineEstimate(turns) + 8);
  let last = plan.startMs;
  const tick = () => (last = clock());
  const sessionId = uuidFrom(`bench:${plan.index}`);
  const w = new CopilotSessionWriter({ sessionId, cwd: plan.project, clock: tick });
  w.noise();
  for (let ti = 0; ti < turns.length; ti++) {
    const t = turns[ti]!;
    if (ti > 0 && rng.chance(COPILOT_REWIND_RATE)) {
      const cut = w.user(prose.message(rng, 60, { plant: false }));
      w.assistant(prose.message(rng, 120, { plant: false }), { reasoning: true });
      w.rewindTo(cut);
    }
    w.user(t.user);
    for (const { text, thinking, tool } of assistantMessages(t.steps)) {
      w.assistant(text, {
        reasoning: thinking,
        ...(tool
          ? { tools: [{ name: "bash", args: { command: tool.cmd }, result: tool.output }] }
          : {}),
      });
    }
    if (ti % COMPACT_EVERY === COMPACT_EVERY - 1) w.compaction();
  }
  w.summarize(turns[0]?.user.slice(0, 60) ?? "");
  const path = await w.write(home);
  await touch(path, last);
  await touch(join(dirname(path), "workspace.yaml"), last);
  return {
    source: "copilot",
    key: `copilot:${sessionId}`,
    files: [path],
    bytes: (await Deno.stat(path)).size,
    // What survived the rewinds: the prose still in the file.
    messages: w.prose.filter((p) => p.inFile).length,
  };
}
