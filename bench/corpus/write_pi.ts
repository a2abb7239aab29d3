/**
 * Pi v3 session files for the corpus through the fixture's PiSessionWriter and
 * writePiSession (tests/fixtures/pi_fixture.ts: header, entry envelope with 8-hex ids and
 * parent chains, AgentMessage shapes): model and thinking-level changes, user messages,
 * assistant messages with thinking / text / toolCall blocks, toolResult messages, and a
 * session_info name.
 */
import { PiSessionWriter, writePiSession } from "../../tests/fixtures/pi_fixture.ts";
import { lineEstimate, type SessionPlan, type TurnPlan } from "./plan.ts";
import { Rng } from "./rng.ts";
import { spreadClock, touch, type WrittenSession } from "./types.ts";

/** Writes one session file under the agent dir `agentDir`. */
export async function writePi(
  agentDir: string,
  plan: SessionPlan,
  turns: TurnPlan[],
): Promise<WrittenSession> {
  const rng = new Rng(plan.seed ^ 0x9191);
  const id = rng.uuid();
  const clock = spreadClock(plan.startMs, plan.endMs, lineEstimate(turns) + 8);
  let last = plan.startMs;
  const tick = () => (last = clock());
  const w = new PiSessionWriter(id, tick, {
    timestamp: new Date(plan.startMs).toISOString(),
    cwd: plan.project,
  });
  w.entry("model_change", { provider: "anthropic", modelId: "claude-sonnet-4-5" });
  w.entry("thinking_level_change", { thinkingLevel: "medium" });
  let messages = 0;
  for (let ti = 0; ti < turns.length; ti++) {
    const t = turns[ti]!;
    w.user([{ type: "text", text: t.user }]);
    messages++;
    let blocks: Record<string, unknown>[] = [];
    for (const s of t.steps) {
      if (s.kind === "think") {
        blocks.push({ type: "thinking", thinking: s.text, thinkingSignature: "EqQBCkgIBxABGAIiQ" });
      } else if (s.kind === "text") {
        w.assistant([...blocks, { type: "text", text: s.text }]);
        blocks = [];
        messages++;
      } else {
        const callId = `toolu_01${rng.hex32().slice(0, 22)}`;
        w.assistant([...blocks, {
          type: "toolCall",
          id: callId,
          name: s.name.toLowerCase(),
          arguments: { command: s.cmd },
        }]);
        blocks = [];
        w.entry("message", {
          message: {
            role: "toolResult",
            toolCallId: callId,
            toolName: s.name.toLowerCase(),
            content: [{ type: "text", text: s.output }],
            isError: false,
            timestamp: tick(),
          },
        });
      }
    }
    if (ti === 0) w.entry("session_info", { name: t.user.slice(0, 50) });
  }
  const path = await writePiSession(agentDir, plan.project, w, plan.startMs);
  await touch(path, last);
  return {
    source: "pi",
    key: `pi:${id}`,
    files: [path],
    bytes: (await Deno.stat(path)).size,
    messages,
    append: { source: "pi", path, leaf: w.leaf! },
  };
}
