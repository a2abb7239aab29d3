/**
 * The session.jsonl vocabulary: one zod schema per event's `data`, and the LogEvent
 * envelope. Every line SessionLog writes is validated here first, so a typo in a typed
 * writer fails loudly in tests instead of producing a line no consumer understands.
 * The vocabulary is open on read (replay passes unknown events through) and closed on
 * write (only names declared here can be emitted).
 */
import { z } from "zod";

const int = z.number().int().nonnegative();
const str = z.string();

/** MessageProvenance: where a conversation message came from. `unknown` only in legacy files. */
export const PROVENANCES = [
  "task",
  "resume_task",
  "follow_up",
  "steer",
  "ask_human_answer",
  "system_injection",
  "tool_output",
  "context_summary",
  "assistant",
  "unknown",
] as const;
export type Provenance = (typeof PROVENANCES)[number];

/** The user-side provenances that are genuine entries and get a conversation_message row. */
export const USER_LANE_PROVENANCES: readonly Provenance[] = [
  "task",
  "resume_task",
  "follow_up",
  "steer",
  "ask_human_answer",
];

/** Session statuses in session_meta.json. */
export const SESSION_STATUSES = [
  "running",
  "waiting",
  "completed",
  "failed",
  "interrupted",
] as const;
export type SessionStatus = (typeof SESSION_STATUSES)[number];

/** Graph edges; managed lineage adds the last three. */
export const RELATIONSHIPS = [
  "side",
  "subagent",
  "fork",
  "anchor-fork",
  "rewind",
  "fission",
] as const;

const userMessage = z.strictObject({
  message_seq: int,
  role: z.literal("user"),
  provenance: z.enum(["task", "resume_task", "follow_up", "steer", "ask_human_answer"]),
  text: str,
  /** askHuman answers that entered the conversation as a tool result reference its seq. */
  ref_seq: int.optional(),
});
const assistantMessage = z.strictObject({
  message_seq: int,
  role: z.literal("assistant"),
  provenance: z.literal("assistant"),
  model_offset: int,
  model_bytes: int,
});

/** data schema per event name. */
export const EVENT_DATA = {
  session_started: z.strictObject({
    task: str,
    project_root: str,
    round: z.number().int().positive(),
    provider: str,
    model: str.optional(),
    autonomy: str,
    resumed: z.boolean(),
  }),
  session_end: z.strictObject({
    status: z.enum(["completed", "failed", "interrupted"]),
    turns: int,
    duration_ms: int,
    reason: str.optional(),
  }),
  session_identity: z.strictObject({
    session_id: str,
    source: str,
    backend: str,
    backend_session_id: str.optional(),
    /** True when this session mirrors an external backend whose own log is canonical. */
    wrapper: z.boolean(),
  }),
  session_relationship: z.strictObject({
    parent_id: str,
    child_id: str,
    relationship: z.enum(RELATIONSHIPS),
  }),
  session_renamed: z.strictObject({ name: str, previous: str.nullable() }),
  log_dir_fallback: z.strictObject({ from: str, to: str, reason: str }),
  crash: z.strictObject({ error: str }),
  info: z.record(str, z.unknown()).optional(),
  warning: z.record(str, z.unknown()).optional(),
  error: z.record(str, z.unknown()).optional(),
  turn_start: z.strictObject({ provider: str }).optional(),
  turn_end: z.strictObject({ commands: int, duration_ms: int }),
  model_response: z.strictObject({
    model_offset: int,
    model_bytes: int,
    has_tool_calls: z.boolean(),
  }),
  conversation_message: z.discriminatedUnion("role", [userMessage, assistantMessage]),
  conversation_rewound: z.strictObject({ cut_after_seq: int, kind: str, superseded_at_ms: int }),
  conversation_message_epoch: z.strictObject({
    mapping: z.array(z.tuple([int, str, str.length(16)])),
  }),
  reasoning_content: z.strictObject({ bytes: int }),
  json_extracted: z.strictObject({ functions: z.array(str), count: int }),
  context_snapshot: z.strictObject({
    stream: str,
    source: str,
    session_id: str,
    tokens: int,
    item_count: int,
    labels: z.array(str),
  }),
  agent_input: z.strictObject({ commands: int, nonces: z.array(str), functions: z.array(str) }),
  agent_output: z.strictObject({
    stdout_bytes: int,
    stderr_bytes: int,
    exit_codes: z.array(z.number().int()),
  }),
  command_started: z.strictObject({ nonce: str, exec: str, pty: z.boolean() }),
  command_finished: z.strictObject({
    nonce: str,
    exit_code: z.number().int(),
    stdout_log: str,
    stderr_log: str,
    pty_log: str.optional(),
    stdout_bytes: int,
    stderr_bytes: int,
    duration_ms: int,
  }),
  approval: z.strictObject({ approval_id: str, command: str, kind: str }),
  approval_resolved: z.strictObject({
    approval_id: str,
    decision: z.enum(["approved", "denied"]),
    by: str,
  }),
  auto_approved: z.strictObject({ approval_id: str, command: str, reason: str }),
  human_question: z.strictObject({ question_id: str, question: str }),
  /** Deliberately textless: the answer's text lives in its conversation_message row. */
  human_response_sent: z.strictObject({ question_id: str }),
  steer_requested: z.strictObject({ steer_id: str, text: str }),
  steer_delivered: z.strictObject({ steer_id: str, message_seq: int }),
  token_usage: z.strictObject({ input_tokens: int, output_tokens: int }),
  cu_task_started: z.strictObject({ task_id: str, task: str }),
  cu_action: z.strictObject({ task_id: str, action: str }),
  cu_task_completed: z.strictObject({ task_id: str, outcome: str, actions: int }),
  voice_session_started: z.strictObject({ provider: str, model: str }),
  voice_reconnected: z.strictObject({ attempt: int }),
  voice_utterance: z.strictObject({ role: z.enum(["user", "assistant"]), text: str }),
  voice_session_ended: z.strictObject({ reason: str }),
  presence_update: z.strictObject({ state: str }),
  frame_captured: z.strictObject({ frame_id: str, stream: str, sent_to_live: z.boolean() }),
} as const;

export type EventName = keyof typeof EVENT_DATA;
export type EventData<K extends EventName> = z.input<(typeof EVENT_DATA)[K]>;

/** Names a consumer may see; anything else in a file is passed through as unknown. */
export const EVENT_NAMES = Object.keys(EVENT_DATA) as EventName[];

/** The on-disk envelope of one session.jsonl line. */
export const LogEventSchema = z.object({
  ts: str,
  ts_ms: z.number().int().optional(),
  turn: int.optional(),
  event: str,
  level: str.optional(),
  message: str.optional(),
  data: z.unknown().optional(),
  file: str.optional(),
  file2: str.optional(),
});
export type LogEvent = z.infer<typeof LogEventSchema>;

/** Fields a writer supplies beside `data`. */
export interface EmitFields {
  turn?: number;
  level?: "debug" | "info" | "warn" | "error";
  message?: string;
  file?: string;
  file2?: string;
}

/** Validates `data` for `name`, throwing TypeError naming the event and the first issue. */
export function validateEventData<K extends EventName>(name: K, data: unknown): unknown {
  const schema = EVENT_DATA[name] as z.ZodType;
  const r = schema.safeParse(data);
  if (!r.success) {
    const issue = r.error.issues[0];
    const where = issue?.path.length ? ` at "${issue.path.join(".")}"` : "";
    throw new TypeError(`Invalid data for event "${name}"${where}: ${issue?.message ?? "invalid"}`);
  }
  return r.data;
}
