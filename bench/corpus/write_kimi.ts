/**
 * Kimi Code sessions for the corpus, mirroring the fixture's wire writer
 * (tests/fixtures/kimi_fixture.ts, formats.md §3; its writer is not exported):
 * `sessions/<kimiBucket(cwd)>/session_<uuid>/` with a v2 state.json and
 * agents/main/wire.jsonl — a metadata line, config.update, turn.prompt twins,
 * context.append_message user prompts, step.begin / content.part (think, text) /
 * tool.call / step.end loop events, and tool.result entries. Protocol 1.5 (agentId on
 * every record, epoch-ms `time`).
 */
import { join } from "node:path";
import { kimiBucket } from "../../tests/fixtures/kimi_fixture.ts";
import { lineEstimate, type SessionPlan, type TurnPlan } from "./plan.ts";
import { Rng } from "./rng.ts";
import { spreadClock, touch, type WrittenSession } from "./types.ts";

/** Writes one session under the KIMI_CODE_HOME `home`. */
export async function writeKimi(
  home: string,
  plan: SessionPlan,
  turns: TurnPlan[],
): Promise<WrittenSession> {
  const rng = new Rng(plan.seed ^ 0x4141);
  const id = `session_${rng.uuid()}`;
  const dir = join(home, "sessions", kimiBucket(plan.project), id);
  const clock = spreadClock(plan.startMs, plan.endMs, lineEstimate(turns) + 8);
  const lines: string[] = [];
  let last = plan.startMs;
  const rec = (type: string, payload: Record<string, unknown>) => {
    last = clock();
    lines.push(JSON.stringify({ type, agentId: "main", ...payload, time: last }));
  };
  lines.push(
    JSON.stringify({ type: "metadata", protocol_version: "1.5", created_at: plan.startMs }),
  );
  rec("config.update", { systemPrompt: "You are Kimi Code." });
  let parts = 0;
  let stepNo = 0;
  let messages = 0;
  for (let ti = 0; ti < turns.length; ti++) {
    const t = turns[ti]!;
    const turnId = String(ti + 1);
    const origin = { kind: "user" };
    rec("turn.prompt", { input: [{ type: "text", text: t.user }], origin });
    rec("context.append_message", {
      message: { role: "user", content: [{ type: "text", text: t.user }], toolCalls: [], origin },
    });
    messages++;
    let step = 0;
    let open: string | null = null;
    const begin = () => {
      open = `s${++stepNo}`;
      step++;
      rec("context.append_loop_event", {
        event: { type: "step.begin", uuid: open, turnId, step },
      });
    };
    const end = () => {
      rec("context.append_loop_event", {
        event: {
          type: "step.end",
          uuid: open,
          turnId,
          step,
          usage: { inputOther: 1200, output: 80, inputCacheRead: 0, inputCacheCreation: 0 },
          finishReason: "end_turn",
        },
      });
      open = null;
    };
    const part = (part: Record<string, unknown>) =>
      rec("context.append_loop_event", {
        event: { uuid: `c${++parts}`, turnId, step, stepUuid: open, type: "content.part", part },
      });
    begin();
    for (const s of t.steps) {
      if (open === null) begin();
      if (s.kind === "think") part({ type: "think", think: s.text });
      else if (s.kind === "text") {
        part({ type: "text", text: s.text });
        messages++;
      } else {
        const toolCallId = `${s.name}:${parts}`;
        rec("context.append_loop_event", {
          event: {
            uuid: `c${++parts}`,
            turnId,
            step,
            stepUuid: open,
            type: "tool.call",
            toolCallId,
            name: s.name,
            args: { command: s.cmd },
          },
        });
        end();
        rec("context.append_loop_event", {
          event: {
            type: "tool.result",
            parentUuid: `c${parts}`,
            toolCallId,
            result: { output: s.output, isError: false },
          },
        });
      }
    }
    if (open !== null) end();
  }
  const wire = join(dir, "agents", "main", "wire.jsonl");
  await Deno.mkdir(join(dir, "agents", "main"), { recursive: true });
  await Deno.writeTextFile(wire, lines.join("\n") + "\n");
  await touch(wire, last);
  const state = {
    id,
    version: 2,
    title: turns[0]?.user.slice(0, 60) ?? "",
    titleKind: "auto",
    isCustomTitle: false,
    createdAt: plan.startMs,
    updatedAt: last,
    archived: false,
    cwd: plan.project,
    agents: { main: { type: "main" } },
    custom: {},
  };
  const statePath = join(dir, "state.json");
  await Deno.writeTextFile(statePath, JSON.stringify(state, null, 2));
  await touch(statePath, last);
  return {
    source: "kimi",
    key: `kimi:${id}`,
    files: [wire],
    bytes: (await Deno.stat(wire)).size,
    messages,
    append: { source: "kimi", path: wire },
  };
}
