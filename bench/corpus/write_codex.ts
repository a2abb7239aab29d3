/**
 * Codex rollouts for the corpus, line for line the shapes of the fixture's RolloutWriter
 * (tests/fixtures/codex_fixture.ts, formats.md §1): session_meta, developer and AGENTS.md /
 * environment-context injections, turn_context, user_message events twinned by user
 * response_items, reasoning items and events, function_call + function_call_output,
 * token_count, assistant message items twinned by agent_message, task_complete. Only the
 * clock differs: timestamps are spread over the planned span.
 */
import { dirname, join } from "node:path";
import { rolloutRel, uuidv7 } from "../../tests/fixtures/codex_fixture.ts";
import { lineEstimate, type SessionPlan, type TurnPlan } from "./plan.ts";
import { Rng } from "./rng.ts";
import { spreadClock, touch, type WrittenSession } from "./types.ts";

const env = (cwd: string) =>
  `<environment_context>\n  <cwd>${cwd}</cwd>\n  <shell>zsh</shell>\n  <current_date>` +
  `2026-05-18</current_date>\n  <timezone>Europe/Paris</timezone>\n</environment_context>`;

/** Writes one rollout under the CODEX_HOME `home`. */
export async function writeCodex(
  home: string,
  plan: SessionPlan,
  turns: TurnPlan[],
): Promise<WrittenSession> {
  const rng = new Rng(plan.seed ^ 0xc0de);
  const id = uuidv7(plan.startMs, `bench:${plan.index}`);
  const clock = spreadClock(plan.startMs, plan.endMs, lineEstimate(turns) + 8);
  const lines: string[] = [];
  let last = plan.startMs;
  const line = (type: string, payload: Record<string, unknown>) => {
    last = clock();
    lines.push(JSON.stringify({ timestamp: new Date(last).toISOString(), type, payload }));
  };
  const item = (prefix: string) => `${prefix}_${rng.hex32()}${rng.hex32().slice(0, 16)}`;
  const cwd = plan.project;
  const turnContext = () =>
    line("turn_context", {
      turn_id: uuidv7(last, `${id}:turn:${lines.length}`),
      cwd,
      approval_policy: "on-request",
      sandbox_policy: { type: "workspace-write", writable_roots: [], network_access: false },
      model: "gpt-5.2-codex",
      effort: "medium",
      summary: "auto",
    });
  const userItem = (text: string) =>
    line("response_item", {
      type: "message",
      role: "user",
      content: [{ type: "input_text", text }],
    });
  line("session_meta", {
    id,
    timestamp: new Date(plan.startMs).toISOString(),
    originator: "codex_cli_rs",
    source: "cli",
    model_provider: "openai",
    cwd,
    cli_version: "0.137.0",
    base_instructions: { text: "You are Codex, a coding agent." },
  });
  line("response_item", {
    type: "message",
    role: "developer",
    content: [{
      type: "input_text",
      text: "<permissions instructions>\nSandbox: workspace-write.",
    }],
  });
  userItem(
    `# AGENTS.md instructions for ${cwd}\n\n<INSTRUCTIONS>\nRun the tests.\n</INSTRUCTIONS>`,
  );
  userItem(env(cwd));
  let messages = 0;
  for (const t of turns) {
    turnContext();
    line("event_msg", { type: "task_started", model_context_window: 258400 });
    userItem(t.user);
    line("event_msg", {
      type: "user_message",
      message: t.user,
      images: [],
      local_images: [],
      text_elements: [],
    });
    messages++;
    let lastText = "";
    for (const s of t.steps) {
      if (s.kind === "think") {
        line("response_item", {
          type: "reasoning",
          id: item("rs"),
          summary: [{ type: "summary_text", text: s.text }],
          content: null,
          encrypted_content: `gAAAAB${rng.hex32()}${rng.hex32()}`,
        });
        line("event_msg", { type: "agent_reasoning", text: s.text });
      } else if (s.kind === "tool") {
        const call_id = `call_${rng.hex32().slice(0, 24)}`;
        line("response_item", {
          type: "function_call",
          id: item("fc"),
          name: "exec_command",
          arguments: JSON.stringify({ cmd: s.cmd, workdir: cwd }),
          call_id,
        });
        line("response_item", {
          type: "function_call_output",
          call_id,
          output: `Chunk ID: 1\nProcess exited with code 0\nOutput:\n${s.output}`,
        });
        const u = { input_tokens: 8123, cached_input_tokens: 4096, output_tokens: 311 };
        line("event_msg", {
          type: "token_count",
          info: { total_token_usage: u, last_token_usage: u, model_context_window: 258400 },
          rate_limits: { primary: { used_percent: 3, window_minutes: 300, resets_at: 1 } },
        });
      } else {
        line("response_item", {
          type: "message",
          role: "assistant",
          id: item("msg"),
          content: [{ type: "output_text", text: s.text, annotations: [] }],
          phase: "final_answer",
        });
        line("event_msg", { type: "agent_message", message: s.text });
        lastText = s.text;
        messages++;
      }
    }
    line("event_msg", {
      type: "task_complete",
      turn_id: uuidv7(last, `${id}:tc:${lines.length}`),
      last_agent_message: lastText,
    });
  }
  const path = join(home, rolloutRel(plan.startMs, id));
  await Deno.mkdir(dirname(path), { recursive: true });
  const body = lines.join("\n") + "\n";
  await Deno.writeTextFile(path, body);
  await touch(path, last);
  return {
    source: "codex",
    key: `codex:${id}`,
    files: [path],
    bytes: (await Deno.stat(path)).size,
    messages,
    append: { source: "codex", path },
  };
}
