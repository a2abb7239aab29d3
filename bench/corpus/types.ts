/**
 * What the corpus generator writes and remembers: per session its files and counts, and
 * how to append one more user message to it in its own format (the incremental figure).
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
  files: string[];
  bytes: number;
  /** Prose messages written (what the index must hold). */
  messages: number;
  append: AppendSpec;
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
