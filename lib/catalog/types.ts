/**
 * The session catalog's public shapes: what the HTTP routes and the CLI receive. One
 * domain error lives here, MalformedLocatorError (a `locate=` value that is not a
 * locator at all: the edge answers 400). Everything a well-formed locator can run into
 * degrades into a typed LocateResult instead, so the detail view still opens.
 */
import type { Source, Store } from "../message_search/mod.ts";

/** What the catalog reads. Paths come from ResolvedConfig; nothing here reads the env. */
export interface CatalogDeps {
  /** `<state-root>/logs` (native sessions). */
  logsDir: string;
  /** The message index store: external sessions come from its manifest entries. */
  store: Store;
  /** `<state-root>/session_names.json` (the name overlay). */
  namesPath: string;
  /** @default Date.now */
  now?: () => number;
}

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

/** One rendered row of a session detail. */
export interface DetailEntry {
  /** Position in the FULL entry list (not the page). */
  index: number;
  /** message | cut | command | command_batch | command_output | approval | steer | question | answer | error | warning | session_start | session_end | log_truncated */
  kind: string;
  ts_ms: number | null;
  role?: "user" | "assistant";
  text?: string;
  superseded?: boolean;
  subagent?: boolean;
  record_id?: string;
  /** 1-based session.jsonl line (native) or source line (external_line records). */
  line?: number;
  detail?: unknown;
}

/** How a `locate=` request came out. */
export type LocateResult =
  | { state: "resolved"; entry_index: number; total_index: number; anchor: "exact" | "nearest" }
  | { state: "stale"; reason: string }
  | { state: "unavailable"; reason: string };

/** Detail page. */
export interface SessionDetail {
  session: SessionSummary;
  entries: DetailEntry[];
  offset: number;
  total: number;
  locate?: LocateResult;
}

/** One Deep Search hit. `ranges` are byte offsets into `snippet` (UTF-8). */
export interface DeepHit {
  session_id: string;
  /** Path relative to the session directory (`session.jsonl`, `turns/turn_001_reasoning.txt`). */
  file: string;
  /** 1-based line, for .jsonl files. */
  line?: number;
  /** Byte offset of the match in the file, for every other file. */
  offset?: number;
  snippet: string;
  ranges: [number, number][];
}

/** A Deep Search page. */
export interface DeepSearchResult {
  hits: DeepHit[];
  cursor: string | null;
  scanned_bytes: number;
  /** True when the byte budget ended the page before the scan finished. */
  partial: boolean;
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
