/**
 * A turn's assistant steps as the messages of the writers whose reasoning is a flag on a
 * message rather than a message of its own (Copilot, Cursor, Droid): a `think` step
 * writes nothing and flags the next message; a `tool` step is an empty message carrying
 * the call; a `text` step is a message of its text. A trailing `think` flags nothing.
 * Pure; the order of the steps is kept (the corpus is deterministic per seed).
 */
import type { Step } from "./plan.ts";

/** One assistant message to write. */
export interface AssistantMessage {
  text: string;
  /** A `think` step came right before it. */
  thinking: boolean;
  /** The tool call it carries (null: a prose message). */
  tool: { cmd: string; output: string } | null;
}

/** The messages `steps` write (see the header). */
export function assistantMessages(steps: readonly Step[]): AssistantMessage[] {
  const out: AssistantMessage[] = [];
  let thinking = false;
  for (const s of steps) {
    if (s.kind === "think") {
      thinking = true;
      continue;
    }
    const tool = s.kind === "tool" ? { cmd: s.cmd, output: s.output } : null;
    out.push({ text: s.kind === "tool" ? "" : s.text, thinking, tool });
    thinking = false;
  }
  return out;
}
