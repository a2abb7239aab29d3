/**
 * Native Intendant sessions for the corpus, written by the real SessionLog writer (the
 * same typed methods the runner uses, as tests/helpers/native_corpus.ts does): the task
 * and follow-ups as canonical user conversation_message rows, each assistant text as one
 * model turn (turns/ sidecar span + conversation_message), reasoning sidecars, and tool
 * runs as agent_input / agent_output turn files (never indexed).
 */
import { join } from "node:path";
import { SessionLog } from "../../lib/session_log/mod.ts";
import { lineEstimate, type SessionPlan, type TurnPlan } from "./plan.ts";
import { Rng } from "./rng.ts";
import { spreadClock, touch, type WrittenSession } from "./types.ts";

/** Writes one session under `logsDir`. */
export async function writeIntendant(
  logsDir: string,
  plan: SessionPlan,
  turns: TurnPlan[],
): Promise<WrittenSession> {
  const rng = new Rng(plan.seed ^ 0x1a7e);
  const clock = spreadClock(plan.startMs, plan.endMs, lineEstimate(turns) + 8);
  let last = plan.startMs;
  const now = () => (last = clock());
  const task = turns[0]!.user;
  const log = await SessionLog.create({
    logsDir,
    tmpDir: logsDir,
    now,
    meta: { projectRoot: plan.project, task, sessionId: rng.uuid() },
  });
  log.sessionStarted({
    task,
    projectRoot: plan.project,
    round: 1,
    provider: "mock",
    autonomy: "headless",
    resumed: false,
  });
  let seq = 0;
  let turn = 0;
  let messages = 0;
  for (let ti = 0; ti < turns.length; ti++) {
    const t = turns[ti]!;
    const provenance = ti === 0 ? "task" : "follow_up";
    log.conversationMessageUser(ti === 0 ? undefined : turn, {
      seq: ++seq,
      provenance,
      text: t.user,
    });
    messages++;
    let pendingTool: { cmd: string; output: string } | null = null;
    for (const s of t.steps) {
      if (s.kind === "tool") {
        pendingTool = { cmd: s.cmd, output: s.output };
        continue;
      }
      if (s.kind === "think") continue; // reasoning is written with the turn below
      await log.turnStart(++turn, "mock");
      log.reasoningContent(turn, `Thinking about ${pendingTool?.cmd ?? "the request"}`);
      log.modelResponseWithMessage(turn, s.text, {
        seq: ++seq,
        hasToolCalls: pendingTool !== null,
      });
      messages++;
      if (pendingTool) {
        log.agentInput(turn, [{ exec: pendingTool.cmd, nonce: `n${turn}` }]);
        log.agentOutput(turn, { stdout: pendingTool.output, stderr: "", exitCodes: [0] });
        pendingTool = null;
      }
      log.turnEnd(turn, { commands: 0, durationMs: 1 });
    }
  }
  await log.finish("completed");
  const path = join(log.dir, "session.jsonl");
  await touch(path, last);
  return {
    source: "intendant",
    key: `intendant:${log.sessionId}`,
    files: [path],
    bytes: (await Deno.stat(path)).size,
    messages,
    append: { source: "intendant", path },
  };
}
