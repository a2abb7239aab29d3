/**
 * Qwen Code sessions for the corpus through the fixture's QwenSessionWriter
 * (tests/helpers/fixtures/qwen.ts, formats-more.md §2): `<runtime>/projects/<cwd with
 * non-alphanumerics → "-">/chats/<sessionId>.jsonl`, one ChatRecord per line chained by
 * uuid/parentUuid: a `session_model` system record, typed prompts, assistant messages
 * streamed as several lines with one uuid (a thought line, then the text line), tool
 * rounds (an assistant functionCall, then the `tool_result` record), a `custom_title`,
 * and, at a small fixed rate, `/rewind`: a turn is written, then a `system/rewind` record
 * whose parent is the record before that turn's prompt — the turn is off the chain
 * (superseded, still indexed and counted) and later turns hang off the marker.
 */
import {
  QwenSessionWriter,
  qwenUuid,
  writeQwenSession,
} from "../../tests/helpers/fixtures/qwen.ts";
import { lineEstimate, type SessionPlan, type TurnPlan } from "./plan.ts";
import { Rng } from "./rng.ts";
import { spreadClock, touch, type WrittenSession } from "./types.ts";

/** Share of the turns (never the first) rewound right after being written. */
export const QWEN_REWIND_RATE = 0.02;

/** Writes one session under the runtime base `base` (the `.qwen` directory). */
export async function writeQwen(
  base: string,
  plan: SessionPlan,
  turns: TurnPlan[],
): Promise<WrittenSession> {
  const rng = new Rng(plan.seed ^ 0x9177);
  const clock = spreadClock(plan.startMs, plan.endMs, lineEstimate(turns) + 8);
  let last = plan.startMs;
  const tick = () => (last = clock());
  const sessionId = qwenUuid(`bench:${plan.index}`);
  const w = new QwenSessionWriter({ sessionId, cwd: plan.project, clock: tick });
  w.system("session_model", { modelId: "qwen3-coder-plus", authType: "qwen-oauth" });
  let messages = 0;
  let calls = 0;
  for (let ti = 0; ti < turns.length; ti++) {
    const t = turns[ti]!;
    const before = w.leaf;
    w.user(t.user);
    messages++;
    let thought: { text: string; thought: true } | null = null;
    for (const s of t.steps) {
      if (s.kind === "think") thought = { text: s.text, thought: true };
      else if (s.kind === "tool") {
        const id = `call_${plan.index}_${++calls}`;
        const name = "run_shell_command";
        w.assistant([
          ...(thought ? [[thought]] : []),
          [{ functionCall: { id, name, args: { command: s.cmd } } }],
        ]);
        thought = null;
        w.toolResult(id, name, s.output);
      } else {
        w.assistant([...(thought ? [[thought]] : []), [{ text: s.text }]]);
        thought = null;
        messages++;
      }
    }
    if (ti > 0 && rng.chance(QWEN_REWIND_RATE)) {
      // truncatedCount: the turn's records (prompt, replies, tool calls and results).
      const tools = t.steps.filter((s) => s.kind === "tool").length;
      w.rewind(before, 1 + t.steps.filter((s) => s.kind === "text").length + 2 * tools);
    }
    if (ti === 0) {
      w.system("custom_title", { customTitle: t.user.slice(0, 50), titleSource: "auto" });
    }
  }
  const path = await writeQwenSession(base, plan.project, w);
  await touch(path, last);
  return {
    source: "qwen",
    key: `qwen:${sessionId}`,
    files: [path],
    bytes: (await Deno.stat(path)).size,
    messages,
  };
}
