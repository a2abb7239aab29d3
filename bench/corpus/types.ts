/**
 * What the corpus generator writes and remembers: per session its files and counts, and
 * (for the five original sources) how to append one more user message to it in its own
 * format (the incremental figure).
 */
import type { Source } from "../../lib/message_search/mod.ts";

/** How to append one user line to a session (kept in corpus.json, so plain data). */
export type AppendSpec =
  | { source: "claude-code"; path: string; sessionId: string; cwd: string; tip: string }
  | { source: "codex"; path: string }
  | { source: "pi"; path: string; leaf: string }
  | { source: "kimi"; path: string }
  | { source: "intendant"; path: string };

/** One written session. */
export interface WrittenSession {
  source: Source;
  key: string;
  /** The session's own transcript files (none for a session inside a shared database). */
  files: string[];
  /**
   * The shared database the session lives in (OpenCode, Goose): every session of the
   * source is in it, so it is checked once (Corpus.databases), not per session.
   */
  db?: string;
  /** Its files' bytes; for a database session, how much the database grew by it. */
  bytes: number;
  /** Prose messages written (what the index must hold, superseded ones included). */
  messages: number;
  /** How to append to it (the five original sources; the append phase uses Claude's). */
  append?: AppendSpec;
}

/** A clock that spreads `lines` timestamps evenly over [startMs, endMs]. */
export function spreadClock(startMs: number, endMs: number, lines: number): () => number {
  const step = Math.max(1, (endMs - startMs) / Math.max(1, lines));
  let t = startMs;
  return () => Math.min(endMs, Math.round(t += step));
}

/** Sets a file's mtime to the time of its last line (as the agent's last write left it). */
export async function touch(path: string, ms: number): Promise<void> {
  const d = new Date(ms);
  await Deno.utime(path, d, d);
}

/** A file's size, 0 when it does not exist yet. */
export async function sizeOf(path: string): Promise<number> {
  try {
    return (await Deno.stat(path)).size;
  } catch (err) {
    if (err instanceof Deno.errors.NotFound) return 0;
    throw err;
  }
}
