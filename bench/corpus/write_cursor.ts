/**
 * Cursor CLI (`cursor-agent`) chats for the corpus through the fixture's
 * CursorTranscriptWriter (tests/helpers/fixtures/cursor.ts, formats-more.md §4):
 * `<CURSOR_CONFIG_DIR>/projects/<encoded cwd>/agent-transcripts/<chat>/<chat>.jsonl`,
 * lines `{role, message:{content:[blocks]}}` — prompts in `<user_query>` (the first one
 * after injected `<attached_files>` context), assistant thinking / text / tool_use
 * blocks, tool_result user lines — and `{"type":"turn_ended"}` after each turn; no ids,
 * no timestamps (the file's mtime is its only time). A tenth of the longer chats hand
 * their last turns to a sub-agent transcript `<chat>/subagents/<name>.jsonl`, which the
 * extractor joins to the chat. No rewinds: whether Cursor rewrites a transcript on an
 * edit is unknown (formats-more §4.4 [unc]), so the corpus does not invent one.
 */
import { assistantMessages } from "./assistant_steps.ts";
import { CursorTranscriptWriter } from "../../tests/helpers/fixtures/cursor.ts";
import { uuidFrom } from "../../tests/helpers/fixtures/copilot.ts";
import type { SessionPlan, TurnPlan } from "./plan.ts";
import { Rng } from "./rng.ts";
import { touch, type WrittenSession } from "./types.ts";

/** Writes one chat (and maybe a sub-agent transcript) under the config dir `root`. */
export async function writeCursor(
  root: string,
  plan: SessionPlan,
  turns: TurnPlan[],
): Promise<WrittenSession> {
  const rng = new Rng(plan.seed ^ 0xc5a5);
  const chatId = uuidFrom(`bench:cursor:${plan.index}`);
  const subTurns = turns.length >= 6 && rng.chance(0.1) ? Math.ceil(turns.length / 10) : 0;
  const main = new CursorTranscriptWriter({ chatId, cwd: plan.project });
  writeTurns(main, turns.slice(0, turns.length - subTurns));
  const path = await main.write(root);
  const files = [path];
  let messages = main.prose.length;
  if (subTurns > 0) {
    const sub = new CursorTranscriptWriter({ chatId, cwd: plan.project, subagent: true });
    writeTurns(sub, turns.slice(turns.length - subTurns));
    const subPath = await sub.writeSubagent(root, chatId, `explore-${rng.int(1000)}`);
    await touch(subPath, plan.endMs);
    files.push(subPath);
    messages += sub.prose.length;
  }
  await touch(path, plan.endMs);
  let bytes = 0;
  for (const f of files) bytes += (await Deno.stat(f)).size;
  return { source: "cursor", key: `cursor:${chatId}`, files, bytes, messages };
}

function writeTurns(w: CursorTranscriptWriter, turns: TurnPlan[]): void {
  for (let ti = 0; ti < turns.length; ti++) {
    const t = turns[ti]!;
    w.user(t.user, { context: ti === 0 });
    for (const { text, thinking, tool } of assistantMessages(t.steps)) {
      w.assistant(text, {
        thinking,
        ...(tool
          ? { tools: [{ name: "Shell", input: { command: tool.cmd }, result: tool.output }] }
          : {}),
      });
    }
    w.turnEnded();
  }
}
