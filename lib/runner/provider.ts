/**
 * The provider seam and the deterministic mock provider. A provider turns the
 * conversation into the next turn (prose, reasoning, commands, a question, done). The
 * mock plays a script turn by turn, or without one answers from the task: one command
 * (`pwd`, real and harmless), then "Done.". The same script always yields the same log,
 * apart from times and ids.
 */
import type { Message } from "../conversation/mod.ts";
import { estimateTokens } from "../conversation/mod.ts";
import type { MockCommand, MockScript } from "./mock_script.ts";

/** One provider answer. */
export interface ProviderTurn {
  reasoning?: string;
  text?: string;
  commands?: MockCommand[];
  askHuman?: string;
  done?: boolean;
  usage: { input: number; output: number };
}

/** What a provider sees. */
export interface ProviderContext {
  /** 0-based index of this model call within the current round. */
  turnIndex: number;
  task: string;
  messages: Message[];
}

export interface Provider {
  readonly name: string;
  readonly model: string;
  /** Whether the provider can produce an exact request snapshot (the mock cannot). */
  readonly hasRequestSnapshot: boolean;
  next(ctx: ProviderContext): ProviderTurn;
}

/** Builds the mock provider; `script` null means the scriptless deterministic answer. */
export function createMockProvider(script: MockScript | null): Provider {
  return {
    name: "mock",
    model: script?.model ?? "mock-1",
    hasRequestSnapshot: false,
    next(ctx) {
      const input = ctx.messages.reduce((n, m) => n + estimateTokens(m.content), 0);
      const turn: DraftTurn = script ? scripted(script, ctx.turnIndex) : scriptless(ctx);
      const output = estimateTokens((turn.text ?? "") + (turn.reasoning ?? ""));
      return { ...turn, usage: turn.usage ?? { input, output } };
    },
  };
}

type DraftTurn = Omit<ProviderTurn, "usage"> & { usage?: ProviderTurn["usage"] };

function scripted(script: MockScript, i: number): DraftTurn {
  const t = script.turns[i];
  // Past the end of the script the session is over: nothing more is said.
  if (!t) return { done: true };
  return {
    reasoning: t.reasoning,
    text: t.text,
    commands: t.commands,
    askHuman: t.ask_human,
    done: t.done,
    usage: t.usage,
  };
}

function scriptless(ctx: ProviderContext): DraftTurn {
  if (ctx.turnIndex === 0) {
    return {
      reasoning: `The task is "${ctx.task}". Look at where we are first.`,
      text: `Working on: ${ctx.task}`,
      commands: [{ exec: "pwd", nonce: "mock1" }],
    };
  }
  return { text: "Done.", done: true };
}
