/**
 * A Claude Code session 40 days old (older than the default 14-day window), written in
 * Claude Code's row format (tests/fixtures/claude_fixture.ts ClaudeWriter) with row
 * timestamps and file mtime set to its age, under `<CLAUDE_CONFIG_DIR>/projects/…`: what
 * `intendant index` keeps in the vault on first sight and the main index skips. The
 * tests then delete it, leaving the vault's copy as the only one.
 */
import { dirname, join } from "node:path";
import { ccUuid, ClaudeWriter, msgId } from "../fixtures/claude_fixture.ts";

export const DAY_MS = 86_400_000;

/** The session's key and file. */
export interface OldClaudeSession {
  key: string;
  sessionId: string;
  path: string;
}

/** Writes one old session saying `prompt` and `answer` into `claudeHome`. */
export async function writeOldClaudeSession(
  claudeHome: string,
  o: { seed: string; prompt: string; answer: string; ageDays?: number },
): Promise<OldClaudeSession> {
  const startMs = Date.now() - (o.ageDays ?? 40) * DAY_MS;
  let clock = startMs;
  const sessionId = ccUuid(o.seed);
  const w = new ClaudeWriter({
    sessionId,
    cwd: "/home/dev/birds",
    version: "2.1.3",
    clock: () => (clock += 1000),
  });
  w.user(o.prompt);
  w.assistant([{ type: "text", text: o.answer }], msgId(`${o.seed}:a`));
  const path = join(claudeHome, "projects", "-home-dev-birds", `${sessionId}.jsonl`);
  await Deno.mkdir(dirname(path), { recursive: true });
  await Deno.writeTextFile(path, w.text());
  const at = new Date(clock + 60_000);
  await Deno.utime(path, at, at);
  return { key: `claude-code:${sessionId}`, sessionId, path };
}
