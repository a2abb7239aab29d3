/**
 * Running statistics a session accumulates for session_summary.json. Updated from the
 * event stream itself (one place: every emitted event passes through updateStats), so the
 * summary can never disagree with the log it summarizes.
 */

/** Accumulated counters. */
export interface SessionStats {
  model_turns: number;
  commands: number;
  errors: number;
  tokens: { input: number; output: number };
  frames_captured: number;
  frames_sent: number;
  cu_tasks: { task_id: string; task: string; outcome: string | null; actions: number }[];
  voice: {
    provider: string | null;
    model: string | null;
    connections: number;
    reconnects: number;
    utterances: number;
  };
  first_event_ms: number | null;
  last_event_ms: number | null;
}

/** Fresh zeroed stats. */
export function newStats(): SessionStats {
  return {
    model_turns: 0,
    commands: 0,
    errors: 0,
    tokens: { input: 0, output: 0 },
    frames_captured: 0,
    frames_sent: 0,
    cu_tasks: [],
    voice: { provider: null, model: null, connections: 0, reconnects: 0, utterances: 0 },
    first_event_ms: null,
    last_event_ms: null,
  };
}

type Data = Record<string, unknown> | undefined;

/** Folds one event into the stats. Unknown events only move the time bounds. */
export function updateStats(s: SessionStats, name: string, data: unknown, ms: number | null): void {
  const d = (data ?? undefined) as Data;
  if (ms !== null) {
    if (s.first_event_ms === null) s.first_event_ms = ms;
    s.last_event_ms = ms;
  }
  switch (name) {
    case "model_response":
      s.model_turns++;
      break;
    case "command_finished":
      s.commands++;
      break;
    case "error":
    case "crash":
      s.errors++;
      break;
    case "token_usage":
      s.tokens.input += num(d?.input_tokens);
      s.tokens.output += num(d?.output_tokens);
      break;
    case "frame_captured":
      s.frames_captured++;
      if (d?.sent_to_live === true) s.frames_sent++;
      break;
    case "cu_task_started":
      s.cu_tasks.push({
        task_id: String(d?.task_id),
        task: String(d?.task),
        outcome: null,
        actions: 0,
      });
      break;
    case "cu_action": {
      const t = s.cu_tasks.find((x) => x.task_id === d?.task_id);
      if (t) t.actions++;
      break;
    }
    case "cu_task_completed": {
      const t = s.cu_tasks.find((x) => x.task_id === d?.task_id);
      if (t) t.outcome = String(d?.outcome);
      break;
    }
    case "voice_session_started":
      s.voice.provider = String(d?.provider);
      s.voice.model = String(d?.model);
      s.voice.connections++;
      break;
    case "voice_reconnected":
      s.voice.reconnects++;
      s.voice.connections++;
      break;
    case "voice_utterance":
      s.voice.utterances++;
      break;
  }
}

function num(v: unknown): number {
  return typeof v === "number" && Number.isFinite(v) ? v : 0;
}
