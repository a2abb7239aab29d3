/**
 * File names inside a session directory. Turn files are `turn_{NNN}_{suffix}` with NNN
 * zero-padded to three digits (turn 1000 is simply "1000"); runtime logs are
 * `{nonce}_{32-hex}_{stdout|stderr|pty}.log`. The nonce is model-chosen, hence hostile:
 * it is reduced to a safe, bounded, single-component slug before it reaches a path.
 */

export const TURNS_DIR = "turns";
export const FRAMES_DIR = "frames";
export const SESSION_JSONL = "session.jsonl";
export const SESSION_META = "session_meta.json";
export const AGENT_CONFIG = "session_agent_config.json";
export const CONVERSATION_JSONL = "conversation.jsonl";
export const TRANSCRIPT_JSONL = "transcript.jsonl";
export const SUMMARY_JSON = "summary.json";
export const SESSION_SUMMARY_JSON = "session_summary.json";
export const DAEMON_LOG = "daemon.log";
export const HUMAN_QUESTION = "human_question";
export const HUMAN_RESPONSE = "human_response";
export const FRAMES_MANIFEST = "frames.jsonl";

/** Longest nonce slug kept in a runtime log name. */
export const NONCE_SLUG_MAX = 48;

/** `turn_{NNN}_{suffix}`. */
export function turnFileName(turn: number, suffix: string): string {
  if (!Number.isInteger(turn) || turn < 0) throw new RangeError(`Invalid turn number "${turn}"`);
  if (!/^[A-Za-z0-9_.-]+$/.test(suffix) || suffix.startsWith(".")) {
    throw new RangeError(`Invalid turn file suffix "${suffix}"`);
  }
  return `turn_${String(turn).padStart(3, "0")}_${suffix}`;
}

/** Recognizes a turn file name; returns its turn and suffix. */
export function parseTurnFileName(name: string): { turn: number; suffix: string } | null {
  const m = /^turn_(\d{3,})_([A-Za-z0-9_.-]+)$/.exec(name);
  return m ? { turn: Number(m[1]), suffix: m[2]! } : null;
}

/**
 * Reduces a model-chosen nonce to `[A-Za-z0-9-]` runs joined by "_", at most
 * NONCE_SLUG_MAX characters; an empty result becomes "cmd". Never throws.
 */
export function sanitizeNonce(raw: unknown): string {
  const s = typeof raw === "string" ? raw : String(raw ?? "");
  const slug = s.replace(/[^A-Za-z0-9-]+/g, "_").replace(/^_+|_+$/g, "").slice(0, NONCE_SLUG_MAX)
    .replace(/_+$/g, "");
  return slug.length > 0 ? slug : "cmd";
}

/** A fresh 32-hex-digit random component (a UUID without dashes). */
export function randomHex32(): string {
  return crypto.randomUUID().replaceAll("-", "");
}

/** `{nonce}_{random}_{kind}.log`. */
export function runtimeLogName(
  nonceSlug: string,
  random: string,
  kind: "stdout" | "stderr" | "pty",
): string {
  return `${nonceSlug}_${random}_${kind}.log`;
}

/** Stream id for context snapshot sidecars: one slug per (source, session id). */
export function contextStreamId(source: string, sessionId: string): string {
  return `${source}-${sessionId}`.replace(/[^A-Za-z0-9-]+/g, "_").slice(0, 96);
}

/** `turn_{NNN}_context_{stream}.json`. */
export function contextSnapshotName(turn: number, stream: string): string {
  return turnFileName(turn, `context_${stream}.json`);
}
