/**
 * summary.json (the compact terminal record) and session_summary.json (the rich
 * statistics record), both written atomically at session end.
 */
import { join } from "node:path";
import { writeFileAtomic } from "../durable/mod.ts";
import { SESSION_SUMMARY_JSON, SUMMARY_JSON } from "./paths.ts";
import type { SessionStats } from "./stats.ts";

/** summary.json fields. */
export interface Summary {
  task: string;
  outcome: string;
  total_turns: number;
  session_id: string;
  session_dir: string;
  ended_at: string;
  rounds?: number;
}

/** Writes summary.json. */
export async function writeSummary(dir: string, s: Summary): Promise<void> {
  await writeFileAtomic(join(dir, SUMMARY_JSON), JSON.stringify(s, null, 2) + "\n");
}

/** Writes session_summary.json from the accumulated stats. */
export async function writeSessionSummary(
  dir: string,
  stats: SessionStats,
  d: { durationMs: number },
): Promise<void> {
  const body = {
    duration_ms: d.durationMs,
    model_turns: stats.model_turns,
    commands: stats.commands,
    errors: stats.errors,
    total_tokens: {
      input: stats.tokens.input,
      output: stats.tokens.output,
      total: stats.tokens.input + stats.tokens.output,
    },
    voice: stats.voice,
    cu_tasks: stats.cu_tasks,
    frames_captured: stats.frames_captured,
    frames_sent: stats.frames_sent,
  };
  await writeFileAtomic(join(dir, SESSION_SUMMARY_JSON), JSON.stringify(body, null, 2) + "\n");
}
