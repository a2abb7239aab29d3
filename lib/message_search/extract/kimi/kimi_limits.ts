/**
 * The Kimi Code extractor's fail-closed bounds (spec, "The extractors" → Kimi Code) and
 * the options object that lets tests inject small ones. The spec values are the
 * defaults and are exact requirements; a bound that is exceeded never yields a partial
 * session: the whole session publishes nothing and the reason is counted.
 * Errors: an unknown limit, or one that is not a positive safe integer, throws RangeError
 * (framework/limits.ts, the one resolver).
 */
import { resolveLimits } from "../framework/plugin.ts";

/** session_index.jsonl cap. The extractor never reads the index (the directory is the truth); exported so a catalog lane shares the figure. */
export const KIMI_INDEX_MAX_BYTES = 8 * 1024 * 1024;
/** Longest session_index.jsonl record (same note as {@link KIMI_INDEX_MAX_BYTES}). */
export const KIMI_INDEX_MAX_RECORD_BYTES = 256 * 1024;
/** Largest state.json read; a bigger one blocks its session. */
export const KIMI_STATE_MAX_BYTES = 2 * 1024 * 1024;
/** Largest agent wire.jsonl. */
export const KIMI_WIRE_MAX_BYTES = 64 * 1024 * 1024;
/** Longest wire record (one JSONL line, without its "\n"). */
export const KIMI_WIRE_MAX_RECORD_BYTES = 2 * 1024 * 1024;
/** Largest hydrated session: all its wires together. */
export const KIMI_SESSION_MAX_BYTES = 128 * 1024 * 1024;
/** Most wire records (lines) in one hydrated session. */
export const KIMI_SESSION_MAX_RECORDS = 200_000;
/** Most agent wires in one session. */
export const KIMI_SESSION_MAX_AGENTS = 256;
/** Discovery considers only this many newest sessions (across all homes). */
export const KIMI_NEWEST_SESSIONS = 2_000;
/** Directory entries one discovery may visit (buckets, sessions, agent dirs together). */
export const KIMI_DISCOVERY_MAX_ENTRIES = 200_000;
/** Deepest agent directory nesting under agents/ that is walked (kimi-code nests agent dirs). */
export const KIMI_AGENT_DIR_MAX_DEPTH = 4;

/** Bounds for one extractor; every field defaults to the spec value above. */
export interface KimiLimits {
  /** @default KIMI_STATE_MAX_BYTES */
  maxStateBytes: number;
  /** @default KIMI_WIRE_MAX_BYTES */
  maxWireBytes: number;
  /** @default KIMI_WIRE_MAX_RECORD_BYTES */
  maxRecordBytes: number;
  /** @default KIMI_SESSION_MAX_BYTES */
  maxSessionBytes: number;
  /** @default KIMI_SESSION_MAX_RECORDS */
  maxSessionRecords: number;
  /** @default KIMI_SESSION_MAX_AGENTS */
  maxAgents: number;
  /** @default KIMI_NEWEST_SESSIONS */
  maxSessions: number;
  /** @default KIMI_DISCOVERY_MAX_ENTRIES */
  maxDirEntries: number;
}

/** The spec values. */
export const KIMI_DEFAULT_LIMITS: Readonly<KimiLimits> = Object.freeze({
  maxStateBytes: KIMI_STATE_MAX_BYTES,
  maxWireBytes: KIMI_WIRE_MAX_BYTES,
  maxRecordBytes: KIMI_WIRE_MAX_RECORD_BYTES,
  maxSessionBytes: KIMI_SESSION_MAX_BYTES,
  maxSessionRecords: KIMI_SESSION_MAX_RECORDS,
  maxAgents: KIMI_SESSION_MAX_AGENTS,
  maxSessions: KIMI_NEWEST_SESSIONS,
  maxDirEntries: KIMI_DISCOVERY_MAX_ENTRIES,
});

/** Fills defaults and validates: RangeError for a limit that is not a positive safe integer. */
export function resolveKimiLimits(partial: Partial<KimiLimits> = {}): KimiLimits {
  return resolveLimits("Kimi", KIMI_DEFAULT_LIMITS, partial);
}

/**
 * Why a session publishes nothing. Each is counted once, in the read that found it.
 * `oversized_state_json` can clear again (state.json is rewritten whole); the others
 * describe append-only wires and stay until a wire is rewritten.
 */
export type KimiBlockReason =
  | "oversized_state_json"
  | "oversized_wire"
  | "oversized_record"
  | "oversized_session"
  | "too_many_wire_records"
  | "too_many_agents"
  | "path_too_long";
