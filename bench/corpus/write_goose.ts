/**
 * Goose sessions for the corpus through the fixture's writeGooseDb
 * (tests/helpers/fixtures/goose.ts, formats-more.md §7): every session goes into ONE
 * `<GOOSE_PATH_ROOT>/data/sessions/sessions.db` (the v5 DDL plus the migrations to v13,
 * WAL mode), one write transaction per session. A turn is the prompt, then per reply
 * either an assistant message of thinking + text, or — when the reply ran tools — an
 * assistant message of thinking + toolRequest items, the user message of their
 * toolResponse outputs, and the assistant text; now and then a systemNotification and a
 * message hidden from the user (`userVisible: false`, never indexed). No rewinds: Goose
 * records none (an edit rewrites the conversation through `replace_conversation`, which
 * leaves exactly what a fresh write leaves). The expected count is the fixture's own
 * `expected` (what a full extraction yields).
 */
import {
  type GooseFixtureMessage,
  type GooseItem,
  writeGooseDb,
} from "../../tests/helpers/fixtures/goose.ts";
import type { SessionPlan, TurnPlan } from "./plan.ts";
import { Rng } from "./rng.ts";
import { sizeOf, type WrittenSession } from "./types.ts";

/** Writes one session into `<dataDir>/sessions/sessions.db`. */
export async function writeGoose(
  dataDir: string,
  plan: SessionPlan,
  turns: TurnPlan[],
): Promise<WrittenSession> {
  const rng = new Rng(plan.seed ^ 0x6005);
  const messages: GooseFixtureMessage[] = [];
  for (const t of turns) {
    messages.push({ role: "user", content: [{ type: "text", text: t.user }] });
    let pre: GooseItem[] = [];
    let outputs: GooseItem[] = [];
    for (const s of t.steps) {
      if (s.kind === "think") pre.push({ type: "thinking", thinking: s.text });
      else if (s.kind === "tool") {
        pre.push({ type: "toolRequest", name: "developer__shell" });
        outputs.push({ type: "toolResponse", output: s.output });
      } else {
        if (outputs.length > 0) {
          messages.push({ role: "assistant", content: pre });
          messages.push({ role: "user", content: outputs });
          pre = [];
          outputs = [];
        }
        messages.push({ role: "assistant", content: [...pre, { type: "text", text: s.text }] });
        pre = [];
      }
    }
    if (rng.chance(0.05)) {
      messages.push({
        role: "assistant",
        content: [{ type: "systemNotification", msg: "Context compacted" }],
      });
      messages.push({
        role: "user",
        content: [{ type: "text", text: "Summary of the conversation for the agent only" }],
        userVisible: false,
      });
    }
  }
  const db = `${dataDir}/sessions/sessions.db`;
  const before = await sizeOf(db);
  // The writer dates the session from `now - 1 h`, messages two seconds apart.
  const r = writeGooseDb(dataDir, [{
    name: turns[0]?.user.slice(0, 50) ?? "",
    workingDir: plan.project,
    messages,
  }], { now: plan.startMs + 3_600_000 });
  const [key, expected] = Object.entries(r.expected)[0]!;
  return {
    source: "goose",
    key,
    files: [],
    db: r.dbPath,
    bytes: (await sizeOf(r.dbPath)) - before,
    messages: expected.length,
  };
}
