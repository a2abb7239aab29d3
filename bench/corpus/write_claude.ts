/**
 * Claude Code transcripts for the corpus through the fixture's own ClaudeWriter
 * (tests/fixtures/claude_fixture.ts: the CC 2.1.x row shapes): a file-history snapshot,
 * string prompts, thinking / text / tool_use assistant rows sharing one message id per API
 * message, tool_result user rows with toolUseResult, turn_duration system rows, ai-title
 * and last-prompt pointer rows. Some sessions also get a subagent transcript under
 * `<project>/<session>/subagents/agent-<id>.jsonl`, which the extractor joins.
 */
import { join } from "node:path";
import { ccUuid, ClaudeWriter, msgId, toolId } from "../../tests/fixtures/claude_fixture.ts";
import { lineEstimate, type SessionPlan, type TurnPlan } from "./plan.ts";
import { Rng } from "./rng.ts";
import { spreadClock, touch, type WrittenSession } from "./types.ts";

/** CC's project directory name: every character outside [A-Za-z0-9] becomes "-". */
export function ccProjectDir(cwd: string): string {
  return cwd.replace(/[^A-Za-z0-9]/g, "-");
}

/** Writes one session (and maybe a subagent) under the projects root `projects`. */
export async function writeClaude(
  projects: string,
  plan: SessionPlan,
  turns: TurnPlan[],
): Promise<WrittenSession> {
  const rng = new Rng(plan.seed ^ 0xc1a0);
  const sessionId = ccUuid(`bench:${plan.index}`);
  const clock = spreadClock(plan.startMs, plan.endMs, lineEstimate(turns) + 8);
  let last = plan.startMs;
  const tick = () => (last = clock());
  // A tenth of the longer sessions delegate their last turns to a subagent.
  const subTurns = turns.length >= 6 && rng.chance(0.1) ? Math.ceil(turns.length / 10) : 0;
  const main = new ClaudeWriter({
    sessionId,
    cwd: plan.project,
    version: "2.1.142",
    clock: tick,
    seed: `bench:${plan.index}`,
  });
  main.meta({
    type: "file-history-snapshot",
    messageId: ccUuid(`snap:${plan.index}`),
    snapshot: { messageId: ccUuid(`snap:${plan.index}`), trackedFileBackups: {} },
    isSnapshotUpdate: false,
  });
  let messages = writeTurns(main, turns.slice(0, turns.length - subTurns), rng, `${plan.index}`);
  const dir = join(projects, ccProjectDir(plan.project));
  await Deno.mkdir(dir, { recursive: true });
  const path = join(dir, `${sessionId}.jsonl`);
  await Deno.writeTextFile(path, main.text());
  const files = [path];
  let lastMain = last;
  if (subTurns > 0) {
    const agentId = rng.hex32().slice(0, 16);
    const sub = new ClaudeWriter({
      sessionId,
      cwd: plan.project,
      version: "2.1.142",
      clock: tick,
      agentId,
    });
    messages += writeTurns(sub, turns.slice(turns.length - subTurns), rng, `${plan.index}:sub`);
    const subDir = join(dir, sessionId, "subagents");
    await Deno.mkdir(subDir, { recursive: true });
    const subPath = join(subDir, `agent-${agentId}.jsonl`);
    await Deno.writeTextFile(subPath, sub.text());
    await touch(subPath, last);
    files.push(subPath);
    lastMain = last;
  }
  await touch(path, lastMain);
  let bytes = 0;
  for (const f of files) bytes += (await Deno.stat(f)).size;
  return {
    source: "claude-code",
    key: `claude-code:${sessionId}`,
    files,
    bytes,
    messages,
    append: { source: "claude-code", path, sessionId, cwd: plan.project, tip: main.tip! },
  };
}

/** Writes the turns' rows; returns the prose messages written. */
function writeTurns(w: ClaudeWriter, turns: TurnPlan[], rng: Rng, seed: string): number {
  let messages = 0;
  let n = 0;
  for (let ti = 0; ti < turns.length; ti++) {
    const t = turns[ti]!;
    w.user(t.user, {}, ti === 0 ? null : w.tip);
    messages++;
    let mid = msgId(`${seed}:${n++}`);
    for (const s of t.steps) {
      if (s.kind === "think") {
        w.assistant([{ type: "thinking", thinking: s.text, signature: "EpYBCkYIBRgCKkD" }], mid);
      } else if (s.kind === "text") {
        w.assistant([{ type: "text", text: s.text }], mid);
        messages++;
      } else {
        const id = toolId(`${seed}:${n++}`);
        w.assistant([{ type: "tool_use", id, name: s.name, input: { command: s.cmd } }], mid);
        const owner = w.tip;
        w.user([{ type: "tool_result", tool_use_id: id, content: s.output }], {
          toolUseResult: { stdout: s.output.slice(0, 4096), stderr: "", interrupted: false },
          sourceToolAssistantUUID: owner,
        });
        // The next API message after a tool result gets a new id.
        mid = msgId(`${seed}:${n++}`);
      }
    }
    w.system("turn_duration", { durationMs: 1000 + rng.int(60_000), isMeta: false });
    if (ti === 0 && !w.o.agentId) {
      w.meta({ type: "ai-title", sessionId: w.o.sessionId, aiTitle: t.user.slice(0, 60) });
    }
    if (ti % 5 === 4 && !w.o.agentId) {
      w.meta({ type: "last-prompt", leafUuid: w.tip, sessionId: w.o.sessionId });
    }
  }
  return messages;
}
