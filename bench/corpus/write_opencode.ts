/**
 * OpenCode sessions for the corpus through the fixture's writeOpenCodeDb
 * (tests/helpers/fixtures/opencode.ts, formats-more.md §6): every session goes into ONE
 * `<XDG_DATA_HOME>/opencode/opencode.db` (the drizzle DDL, WAL mode, as OpenCode creates
 * it), one write transaction per session. A user message holds the prompt's text part
 * (the first prompt also a synthetic "Called the Read tool" text and a file part); each
 * assistant text is one assistant message of parts step-start, reasoning, tool parts
 * (their output in `state.output`), the text, step-finish — so tool output and reasoning
 * sit in the database beside the prose and must be skipped. At a small fixed rate a
 * session ends in `/undo` (`session.revert` names its last prompt): the undone messages
 * stay in the index, superseded, and count as written. The expected count is the
 * fixture's own `expected` (what a full extraction yields).
 */
import {
  type OcFixtureMessage,
  type OcFixturePart,
  writeOpenCodeDb,
} from "../../tests/helpers/fixtures/opencode.ts";
import type { SessionPlan, TurnPlan } from "./plan.ts";
import { Rng } from "./rng.ts";
import { sizeOf, type WrittenSession } from "./types.ts";

/** Share of the sessions (of at least two turns) whose last turn is undone. */
export const OPENCODE_REVERT_RATE = 0.05;

/** Writes one session into `<dataDir>/opencode.db`. */
export async function writeOpenCode(
  dataDir: string,
  plan: SessionPlan,
  turns: TurnPlan[],
): Promise<WrittenSession> {
  const rng = new Rng(plan.seed ^ 0x0c0d);
  const messages: OcFixtureMessage[] = [];
  let lastPrompt = 0;
  for (let ti = 0; ti < turns.length; ti++) {
    const t = turns[ti]!;
    lastPrompt = messages.length;
    const userParts: OcFixturePart[] = [{ type: "text", text: t.user }];
    if (ti === 0) {
      userParts.push(
        {
          type: "text",
          text: "Called the Read tool with the following input: {}",
          synthetic: true,
        },
        { type: "file" },
      );
    }
    messages.push({ role: "user", parts: userParts });
    let parts: OcFixturePart[] = [{ type: "step-start" }];
    for (const s of t.steps) {
      if (s.kind === "think") parts.push({ type: "reasoning", text: s.text });
      else if (s.kind === "tool") parts.push({ type: "tool", tool: "bash", output: s.output });
      else {
        parts.push({ type: "text", text: s.text }, { type: "step-finish" });
        if (rng.chance(0.2)) parts.push({ type: "patch" });
        messages.push({ role: "assistant", parts });
        parts = [{ type: "step-start" }];
      }
    }
  }
  const revert = turns.length >= 2 && rng.chance(OPENCODE_REVERT_RATE)
    ? { message: lastPrompt }
    : undefined;
  const before = await sizeOf(`${dataDir}/opencode.db`);
  // The writer lays the session out from `now - 1 h`, messages a second apart.
  const r = writeOpenCodeDb(dataDir, [{
    title: turns[0]?.user.slice(0, 50),
    directory: plan.project,
    messages,
    ...(revert ? { revert } : {}),
  }], { now: plan.startMs + 3_600_000, seed: plan.index + 1 });
  const [key, expected] = Object.entries(r.expected)[0]!;
  return {
    source: "opencode",
    key,
    files: [],
    db: r.dbPath,
    // The database's growth: the session's share of it.
    bytes: (await sizeOf(r.dbPath)) - before,
    messages: expected.length,
  };
}
