/**
 * The headless agent loop for one round. Per turn: take control requests (rollbacks,
 * then steers) at the boundary, ask the provider, log reasoning and prose (through the
 * message lane), run commands (approvals auto-granted: headless), ask the human and wait,
 * end the turn. The conversation and the log are written in lockstep: every message that
 * gets a seq is appended to conversation.jsonl before its lane row is emitted. A blocked
 * askHuman is announced on `notify` as ONE line (the question made terminal-safe and cut
 * to QUESTION_NOTICE_MAX_CHARS, and the exact `intendant ctl answer` command), printed
 * once the question file and the "waiting" status are in place, so the command works the
 * moment it is read.
 */
import { shellQuote } from "../catalog/mod.ts";
import type { Conversation } from "../conversation/mod.ts";
import { terminalSafe } from "../text/mod.ts";
import type { SessionLog } from "../session_log/mod.ts";
import { applyRollback, takeRequests, waitForAnswer, writeQuestion } from "./control.ts";
import type { Provider } from "./provider.ts";
import { runCommand } from "./runtime.ts";

/** Options for {@link runRound}. */
export interface RoundOptions {
  log: SessionLog;
  conversation: Conversation;
  provider: Provider;
  task: string;
  projectRoot: string;
  signal: AbortSignal;
  /** Poll interval for answers. @default 100 */
  pollMs?: number;
  /** Safety stop for runaway scripts. @default 200 */
  maxTurns?: number;
  /** Where one-line operator notices go (stderr in `intendant run`). @default no-op */
  notify?: (line: string) => void;
}

/** Longest question shown in the blocked-on-askHuman notice (code points). */
export const QUESTION_NOTICE_MAX_CHARS = 200;

/** The one line `intendant run` prints when it blocks on askHuman. */
export function askHumanNotice(sessionId: string, question: string): string {
  const chars = Array.from(terminalSafe(question).trim());
  const shown = chars.length > QUESTION_NOTICE_MAX_CHARS
    ? chars.slice(0, QUESTION_NOTICE_MAX_CHARS - 1).join("") + "…"
    : chars.join("");
  const id = shellQuote(terminalSafe(sessionId));
  // "…" is the placeholder the resume command uses too: quoted, so pasting the line
  // unedited answers "…" rather than running shell syntax.
  return `intendant: session ${id} is waiting for an answer to "${shown}" — run: ` +
    `intendant ctl answer ${id} "…"`;
}

export type RoundOutcome = "completed" | "interrupted";

/** Runs model turns until the provider is done or the signal aborts. */
export async function runRound(o: RoundOptions): Promise<RoundOutcome> {
  const { log, conversation, provider, signal } = o;
  const dir = log.dir;
  const maxTurns = o.maxTurns ?? 200;
  for (let i = 0; i < maxTurns; i++) {
    if (signal.aborted) return "interrupted";
    const turn = log.meta.last_turn + 1;
    await applyControl(log, conversation, turn);
    await log.turnStart(turn, provider.name);
    const started = Date.now();
    const messages = conversation.windowed();
    log.turnMessages(turn, messages, { providerHasSnapshot: provider.hasRequestSnapshot });
    const r = provider.next({ turnIndex: i, task: o.task, messages });
    log.tokenUsage(turn, r.usage);
    if (r.reasoning) log.reasoningContent(turn, r.reasoning);
    const commands = r.commands ?? [];
    if (r.text) {
      const msg = conversation.append({
        role: "assistant",
        content: r.text,
        provenance: "assistant",
      }, dir);
      log.modelResponseWithMessage(turn, r.text, {
        seq: msg.seq,
        hasToolCalls: commands.length > 0,
      });
    }
    if (commands.length > 0) {
      log.jsonExtracted(turn, { commands });
      log.agentInput(turn, commands);
      let stdout = "", stderr = "";
      const exitCodes: number[] = [];
      for (const cmd of commands) {
        if (signal.aborted) break;
        const res = await runCommand(cmd, { log, turn, cwd: o.projectRoot, signal });
        stdout += res.stdout;
        stderr += res.stderr;
        exitCodes.push(res.exitCode);
        conversation.append({
          role: "tool",
          content: res.toolText,
          provenance: "tool_output",
          toolCallId: res.nonce,
        }, dir);
      }
      log.agentOutput(turn, { stdout, stderr, exitCodes });
    }
    if (r.askHuman) {
      const answered = await askHuman(log, conversation, turn, r.askHuman, o);
      if (!answered) {
        log.turnEnd(turn, { commands: commands.length, durationMs: Date.now() - started });
        return "interrupted";
      }
    }
    log.turnEnd(turn, { commands: commands.length, durationMs: Date.now() - started });
    if (r.done) return "completed";
  }
  log.warning(`Stopped after ${maxTurns} turns without the provider finishing`);
  return "completed";
}

async function askHuman(
  log: SessionLog,
  conversation: Conversation,
  turn: number,
  question: string,
  o: RoundOptions,
): Promise<boolean> {
  const questionId = crypto.randomUUID();
  log.humanQuestion(turn, questionId, question);
  writeQuestion(log.dir, questionId, question);
  await log.updateMeta({ status: "waiting" });
  o.notify?.(askHumanNotice(log.sessionId, question));
  const answer = await waitForAnswer(log.dir, questionId, { signal: o.signal, pollMs: o.pollMs });
  if (answer === null) return false;
  await log.updateMeta({ status: "running" });
  log.humanResponseSent(turn, questionId);
  const msg = conversation.append({
    role: "user",
    content: `[Human answer] ${answer}`,
    provenance: "ask_human_answer",
  }, log.dir);
  log.conversationMessageUser(turn, { seq: msg.seq, provenance: "ask_human_answer", text: answer });
  return true;
}

/** Applies queued rollbacks, then delivers queued steers, at a turn boundary. */
async function applyControl(
  log: SessionLog,
  conversation: Conversation,
  turn: number,
): Promise<void> {
  const { requests, bad } = await takeRequests(log.dir);
  for (const name of bad) {
    log.warning(`Ignored an unreadable control request "${name}"`, undefined, turn);
  }
  for (const req of requests) {
    if (req.kind !== "rollback") continue;
    try {
      await applyRollback(
        log.dir,
        conversation,
        req.to_seq,
        (d) =>
          log.conversationRewound({
            cutAfterSeq: d.cut_after_seq,
            kind: d.kind,
            supersededAtMs: d.superseded_at_ms,
          }),
      );
    } catch (err) {
      log.error(
        `Rollback to seq ${req.to_seq} refused: ${(err as Error).message}`,
        undefined,
        turn,
      );
    }
  }
  for (const req of requests) {
    if (req.kind !== "steer") continue;
    const msg = conversation.append({
      role: "user",
      content: `[User] ${req.text}`,
      provenance: "steer",
    }, log.dir);
    log.steerDelivered(turn, req.steer_id, msg.seq);
    log.conversationMessageUser(turn, { seq: msg.seq, provenance: "steer", text: req.text });
  }
}
