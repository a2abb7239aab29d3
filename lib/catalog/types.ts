/**
 * The session catalog's public shapes: what the HTTP routes and the CLI receive. One
 * domain error lives here, MalformedLocatorError (a `locate=` value that is not a
 * locator at all: the edge answers 400). Everything a well-formed locator can run into
 * degrades into a typed LocateResult instead, so the detail view still opens.
 */
import type { ShardDamage, Source, Store } from "../message_search/mod.ts";
import type { Vault } from "../vault/mod.ts";

/** What the catalog reads. Paths come from ResolvedConfig; nothing here reads the env. */
export interface CatalogDeps {
  /** `<state-root>/logs` (native sessions). */
  logsDir: string;
  /** The message index store: external sessions come from its manifest entries. */
  store: Store;
  /** `<state-root>/session_names.json` (the name overlay). */
  namesPath: string;
  /**
   * Told when the detail view finds an external session's index shard damaged (the
   * daemon wires Indexer.reportDamage: quarantine and an immediate re-derivation sweep).
   */
  onDamage?: (found: readonly ShardDamage[]) => void;
  /**
   * The vault's copy of one of a session's files (its last kept version, whole), or null
   * when it keeps none: the detail reads a gone session's tool calls from it. Absent:
   * no vault (INTENDANT_VAULT=off, or a caller without one).
   */
  keptCopy?: KeptCopy;
  /**
   * The vault itself: Deep Search scans its copies of gone sessions (and of sessions the
   * index no longer holds). Absent or null: no vault.
   */
  vault?: Vault | null;
  /** @default Date.now */
  now?: () => number;
}

/** See {@link CatalogDeps.keptCopy}; `maxBytes` bounds the copy (null beyond it). */
export type KeptCopy = (
  o: { key: string; path: string; maxBytes: number },
) => Promise<Uint8Array | null>;

/** One listed session, native or external. */
export interface SessionSummary {
  /** `<source>:<session_id>` */
  key: string;
  source: Source;
  session_id: string;
  name: string | null;
  title: string | null;
  project: string | null;
  /** Native meta status; external: null. */
  status: string | null;
  /** Native: meta created_at_ms; external: oldest ts of the shard. */
  created_ms: number | null;
  /** Native: the last event's ts_ms (mtime when no event carries one); external: newest ts. */
  updated_ms: number | null;
  message_count: number;
  source_gone: boolean;
  parent_session_id: string | null;
  /** A shell command that resumes the session in its own tool (see resume.ts). */
  resume_command: string;
}

/** An output excerpt of a tool call, by label (stdout, stderr, output, pty_log, …). */
export interface ToolOutput {
  /** The head of the output, cut at EXCERPT_CAP_BYTES on a character boundary. */
  excerpt?: string;
  truncated?: boolean;
  /** The whole output's size, when known. */
  bytes?: number;
  /** Why the output cannot be shown (a refused or missing file). */
  unavailable?: string;
}

/**
 * One tool call of the turn that made it (full-audit replay): the detail view shows it,
 * output collapsed, under that turn's message — or, for a turn with no prose, under a
 * `tool_calls` entry of its own. Each call appears once.
 */
export interface ToolCallEntry {
  /** The tool as the agent named it ("shell" for the native runner's commands). */
  name: string;
  /** What was asked: the command line, or the arguments as compact JSON; capped at TOOL_INPUT_CAP_BYTES. */
  input: string;
  input_truncated?: boolean;
  ts_ms: number | null;
  /** ok: a result arrived; error: it reported failure; pending: no result (yet). */
  status: "ok" | "error" | "pending";
  exit_code?: number | null;
  /** Wall time from start to result, when the producer recorded it. */
  duration_ms?: number;
  output: Record<string, ToolOutput>;
  /** Producer-specific facts (native: nonce, pty, approval; exit_codes of a legacy batch). */
  detail?: Record<string, unknown>;
}

/** One rendered row of a session detail. */
export interface DetailEntry {
  /** Position in the FULL entry list (not the page). */
  index: number;
  /** message | tool_calls | cut | context_snapshot | approval | steer | question | answer | error | warning | session_start | session_end | log_truncated (and, until every producer groups its tools: command | command_batch | command_output) */
  kind: string;
  ts_ms: number | null;
  role?: "user" | "assistant";
  text?: string;
  superseded?: boolean;
  subagent?: boolean;
  record_id?: string;
  /** 1-based session.jsonl line (native) or source line (external_line records). */
  line?: number;
  /** The tool calls this entry's turn made (kind message or tool_calls). */
  tools?: ToolCallEntry[];
  detail?: unknown;
}

/** How a `locate=` request came out. */
export type LocateResult =
  | {
    state: "resolved";
    entry_index: number;
    total_index: number;
    anchor: "exact" | "nearest";
    /**
     * A nearest anchor that renders the very same message (a native assistant row's
     * model_response twin: same span, same text) — the UI says nothing about "closest".
     */
    same_message?: boolean;
  }
  | { state: "stale"; reason: string }
  | { state: "unavailable"; reason: string };

/** Detail page. */
export interface SessionDetail {
  session: SessionSummary;
  entries: DetailEntry[];
  offset: number;
  total: number;
  locate?: LocateResult;
  /**
   * With `q`: total indices (ascending) of every entry whose shown text holds every term
   * of the query (search's fold), at most DETAIL_HITS_MAX of them.
   */
  hits?: number[];
  /** False when DETAIL_HITS_MAX or DETAIL_HITS_SCAN_MAX_BYTES cut the hit scan short. */
  hits_complete?: boolean;
  /** Native sessions only: the askHuman question a live session is blocked on, or null. */
  pending_question?: PendingQuestion | null;
  /** External sessions only: whether their tool calls could be read from the source files. */
  activity?: ActivityStatus;
}

/**
 * How reading an external session's source files for its tool calls went. The prose
 * always comes from the index; this says whether the tools shown beside it are complete.
 */
export interface ActivityStatus {
  /**
   * ok: every source file was read whole; partial: some were refused, missing or cut at
   * the read cap (`files` says which); unavailable: none could be read, no tool calls shown.
   */
  state: "ok" | "partial" | "unavailable";
  /** Why not ok, in a sentence. */
  reason?: string;
  /** Per source file (path relative to the tool's home, as locators name it). */
  files: { file: string; state: "ok" | "truncated" | "unavailable"; reason?: string }[];
  /** "vault": the agent deleted the files and these tool calls come from the vault's copy. */
  from?: "vault";
  /** Lines not read across the files, by reason (malformed_line, oversized_line, torn_tail, orphan_result). */
  skipped: Record<string, number>;
}

/** A question a live native session waits on (`human_question`), answered by POST …/answer. */
export interface PendingQuestion {
  question_id: string;
  /** Capped at ENTRY_TEXT_CAP_BYTES; "" when the file was too large to parse. */
  question: string;
  question_truncated?: boolean;
  /** When it was asked (the question file's mtime). */
  asked_ms: number;
}

/** One Deep Search hit. `ranges` are byte offsets into `snippet` (UTF-8). */
export interface DeepHit {
  /** `<source>:<session_id>` */
  key: string;
  source: Source;
  session_id: string;
  /**
   * Native: the path relative to the session directory (`session.jsonl`,
   * `turns/turn_001_reasoning.txt`); external: the agent's path of the file.
   */
  file: string;
  /** The bytes came from the vault's copy (the agent's file is gone). */
  from?: "vault";
  /** 1-based line, for .jsonl files. */
  line?: number;
  /** Byte offset of the match in the file, for every other file. */
  offset?: number;
  /** Masked (lib/secrets): a deep hit quotes raw tool output. */
  snippet: string;
  ranges: [number, number][];
}

/** One source's share of a Deep Search page. */
export interface DeepSourceTally {
  sessions: number;
  files: number;
  bytes: number;
  /** Of those, read from the vault's copies. */
  vault_sessions: number;
  vault_bytes: number;
}

/** What one Deep Search page read (counts of this page only: a pager sums them). */
export interface DeepScanned {
  sessions: number;
  files: number;
  bytes: number;
  by_source: Partial<Record<Source, DeepSourceTally>>;
  /** Files that could not be read, by reason (missing, symlink, too_large, corrupt, …). */
  skipped_files: Record<string, number>;
  /** Sessions not scanned by design, with the reason. */
  not_scanned: { source: Source; sessions: number; reason: string }[];
  /** Gone sessions of which the vault holds no copy: nothing left to scan. */
  gone_unkept: number;
  /** Every session was scanned to its end by this and the earlier pages. */
  complete: boolean;
  /** Why this page stopped early: the hit limit, the byte budget or the time budget. */
  stopped: "hits" | "bytes" | "time" | null;
}

/** A Deep Search page. */
export interface DeepSearchResult {
  hits: DeepHit[];
  cursor: string | null;
  scanned_bytes: number;
  /** True when a byte or time budget ended the page before the scan finished. */
  partial: boolean;
  scanned: DeepScanned;
  /** Where the scan is: sessions before the resume point, of all it will scan. */
  progress: { sessions_done: number; sessions_total: number };
}

/** A `locate=` value that is not a locator (too long, not base64url/JSON, schema mismatch). */
export class MalformedLocatorError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = "MalformedLocatorError";
  }
}

/** Default and largest detail page. */
export const DETAIL_DEFAULT_LIMIT = 200;
export const DETAIL_MAX_LIMIT = 1000;
/** Default and largest listing page. */
export const LIST_DEFAULT_LIMIT = 50;
export const LIST_MAX_LIMIT = 1000;
/** Longest text an entry carries; longer text is cut on a character boundary and flagged. */
export const ENTRY_TEXT_CAP_BYTES = 64 * 1024;
/** Longest stdout/stderr excerpt a command entry carries. */
export const EXCERPT_CAP_BYTES = 8 * 1024;
/** Longest tool-call input (command line or JSON arguments) an entry carries. */
export const TOOL_INPUT_CAP_BYTES = 4 * 1024;
/** Most hit indices a detail answer lists for `q`. */
export const DETAIL_HITS_MAX = 1000;
/** Most entry text (bytes) one hit scan reads; a longer session answers hits_complete: false. */
export const DETAIL_HITS_SCAN_MAX_BYTES = 64 * 1024 * 1024;
