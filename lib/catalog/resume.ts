/**
 * The resume command shown beside every listed session: what a user pastes into a shell
 * to continue it in its own tool. Every value that came from a file (ids, paths) is
 * shell-quoted unless it is plainly safe, so a hostile id can never become shell syntax.
 * The forms, and why:
 *  - intendant: `intendant run --resume <id> "…"`. Our CLI takes the new task as the
 *    positional argument; "…" marks where it goes (spec "Resume and Rehydration").
 *  - codex: `codex resume <thread-id>`. Codex looks the rollout up by thread id under its
 *    sessions/ tree from any directory.
 *  - claude-code: `cd <project> && claude --resume <uuid>`. Claude Code stores sessions
 *    per project directory and `--resume <id>` only searches the current project's, so
 *    the command starts in the session's project when it is known.
 *  - kimi: `cd <project> && kimi --session <id>`. Kimi buckets sessions by working
 *    directory and documents `--session <id>` (alias `-r/--resume`); an unknown id in the
 *    wrong directory silently starts a NEW session, hence the `cd`.
 *  - pi: `pi --session <path>`. Pi's `--session` takes the session FILE; the path is the
 *    shard's source file, so no directory change is needed.
 */
import type { Source } from "../message_search/mod.ts";

/** Quotes `s` for a POSIX shell unless it only holds characters that need no quoting. */
export function shellQuote(s: string): string {
  if (/^[A-Za-z0-9._:@%+=,/-]+$/.test(s)) return s;
  return `'${s.replaceAll("'", `'\\''`)}'`;
}

/** What a resume command needs to know about a session. */
export interface ResumeFacts {
  source: Source;
  sessionId: string;
  project: string | null;
  /** Source files of an external session (absolute paths, main file first). */
  files: readonly string[];
}

/** The resume command for one session. */
export function resumeCommand(f: ResumeFacts): string {
  const id = shellQuote(f.sessionId);
  const cd = f.project ? `cd ${shellQuote(f.project)} && ` : "";
  switch (f.source) {
    case "intendant":
      return `intendant run --resume ${id} "…"`;
    case "codex":
      return `codex resume ${id}`;
    case "claude-code":
      return `${cd}claude --resume ${id}`;
    case "kimi":
      return `${cd}kimi --session ${id}`;
    case "pi": {
      const file = f.files.find((p) => p.endsWith(".jsonl")) ?? f.files[0];
      // Without a known file Pi can still pick the session interactively (`pi --resume`).
      return file ? `pi --session ${shellQuote(file)}` : "pi --resume";
    }
  }
}
