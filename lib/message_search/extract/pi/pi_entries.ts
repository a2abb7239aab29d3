/**
 * Pi session lines → typed facts: the header (line 1) and the tree entries after it, each
 * reduced to what the index needs (id, parentId, prose, session name). Pure: no I/O.
 *
 * On-disk facts (FORMAT.md §2, [src] badlogic/pi-mono @83378aa core/session-manager.ts,
 * packages/ai/src/types.ts, core/messages.ts):
 * - Header: `{"type":"session","version":3,"id":<uuid>,"timestamp":<ISO>,"cwd",
 *   "parentSession"?}`. v1 has no `version` and its entries carry no ids; v2 has ids and a
 *   `hookMessage` role (v3 renamed it `custom`). Pi validates a header exactly as
 *   `type === "session" && typeof id === "string"` (loadEntriesFromFile).
 * - Entries: `{type, id, parentId: string|null, timestamp: ISO, …}`. Pi walks parents with
 *   `parentId ? byId.get(parentId) : undefined`, so "" counts as no parent too.
 * - Prose: `message` entries only. role "user": `content` string, or its `text` blocks
 *   (images skipped). role "assistant": its `text` blocks only (never `thinking`,
 *   `toolCall`, `errorMessage`). Every other role (toolResult, bashExecution, custom,
 *   hookMessage, branchSummary, compactionSummary) and every other entry type
 *   (compaction/branch_summary summaries, custom, custom_message, labels, model and
 *   thinking changes) is never prose. `session_info.name` is the title, not prose.
 * - Several text blocks of one message join with "\n" (Pi's own listing joins with " ";
 *   a newline keeps the blocks apart in snippets). Whitespace-only prose yields no record.
 * Errors: none thrown; a bad line is counted in `skipped` by reason and yields null.
 */
import { countSkip } from "../framework/plugin.ts";
/** First-user-prose title: whitespace runs collapsed, cut to 100 code points. */
export { foldedTitle as titleFrom } from "../framework/plugin.ts";

/** What the index keeps of a session header. */
export interface PiHeader {
  /** The header `id`, or null when absent/unusable (the file-name uuid stands in). */
  id: string | null;
  /** 1 when absent (v1 files predate the field). */
  version: number;
  cwd: string | null;
  /** Path of the session this one was forked from (Pi stores a path, not an id). */
  parentSession: string | null;
}

/** One tree entry, reduced. */
export interface PiEntry {
  id: string;
  parentId: string | null;
  /** 1-based line number in the file. */
  line: number;
  prose: { role: "user" | "assistant"; text: string; ts_ms: number } | null;
  /** A non-empty `session_info.name`. */
  name: string | null;
}

/** Longest entry/session id accepted (the locator's record_id cap). */
export const PI_ID_MAX_CHARS = 512;

type Obj = Record<string, unknown>;

function isObj(v: unknown): v is Obj {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

function isId(v: unknown): v is string {
  if (typeof v !== "string" || v.length === 0 || v.length > PI_ID_MAX_CHARS) return false;
  // Control characters never occur in Pi ids (uuid slices); they would poison keys.
  for (let i = 0; i < v.length; i++) {
    const c = v.charCodeAt(i);
    if (c < 0x20 || c === 0x7f) return false;
  }
  return true;
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    // Not JSON (or invalid UTF-8 decoded to U+FFFD breaking the syntax): the caller counts it.
    return undefined;
  }
}

/** Parses line 1; null when it is not a Pi session header. */
export function parseHeader(text: string): PiHeader | null {
  const raw = parseJson(text);
  if (!isObj(raw) || raw.type !== "session") return null;
  const version = typeof raw.version === "number" && Number.isInteger(raw.version)
    ? raw.version
    : 1;
  return {
    id: isId(raw.id) ? raw.id : null,
    version,
    cwd: typeof raw.cwd === "string" && raw.cwd.length > 0 ? raw.cwd : null,
    parentSession: typeof raw.parentSession === "string" && raw.parentSession.length > 0
      ? raw.parentSession
      : null,
  };
}

/**
 * Parses one entry line (after the header). Returns null for a blank, malformed or
 * id-less line, counting why; `version` is the header's (v1 entries have no ids).
 */
export function parseEntry(
  text: string,
  line: number,
  version: number,
  skipped: Record<string, number>,
): PiEntry | null {
  // Pi's loader skips blank lines silently; so do we.
  if (text.trim().length === 0) return null;
  const raw = parseJson(text);
  if (!isObj(raw)) {
    countSkip(skipped, "malformed_line");
    return null;
  }
  if (raw.type === "session") {
    countSkip(skipped, "extra_header");
    return null;
  }
  if (!isId(raw.id)) {
    countSkip(skipped, version < 2 ? "v1_entry_without_id" : "malformed_entry");
    return null;
  }
  // Pi treats a missing, null or empty parentId alike: the entry is a root.
  const parentId = raw.parentId === undefined || raw.parentId === null || raw.parentId === ""
    ? null
    : raw.parentId;
  if (typeof raw.type !== "string" || (parentId !== null && typeof parentId !== "string")) {
    countSkip(skipped, "malformed_entry");
    return null;
  }
  const entry: PiEntry = { id: raw.id, parentId, line, prose: null, name: null };
  if (raw.type === "session_info" && typeof raw.name === "string" && raw.name.trim() !== "") {
    entry.name = raw.name;
  } else if (raw.type === "message") {
    entry.prose = proseOf(raw, skipped);
  }
  return entry;
}

function proseOf(
  raw: Obj,
  skipped: Record<string, number>,
): PiEntry["prose"] {
  const msg = raw.message;
  if (!isObj(msg) || (msg.role !== "user" && msg.role !== "assistant")) return null;
  // Assistant content is always a block array in Pi; only user content may be a string.
  const text = textOf(msg.content, msg.role === "user");
  if (text === null) return null;
  const ts = tsOf(raw.timestamp, msg.timestamp);
  if (ts === null) {
    countSkip(skipped, "bad_timestamp");
    return null;
  }
  return { role: msg.role, text, ts_ms: ts };
}

/** The string content, or the `text` blocks joined; null when nothing but whitespace. */
function textOf(content: unknown, allowString: boolean): string | null {
  let text: string;
  if (typeof content === "string" && allowString) text = content;
  else if (Array.isArray(content)) {
    text = content
      .filter((b): b is Obj & { text: string } =>
        isObj(b) && b.type === "text" && typeof b.text === "string" && b.text.length > 0
      )
      .map((b) => b.text)
      .join("\n");
  } else return null;
  return text.trim().length > 0 ? text : null;
}

/** Entry ISO timestamp first (the base shape), the message's epoch-ms stamp second. */
function tsOf(entryTs: unknown, msgTs: unknown): number | null {
  if (typeof entryTs === "string") {
    const ms = Date.parse(entryTs);
    if (Number.isFinite(ms)) return ms;
  }
  // A safe integer only: 1e308 would fail the record schema and sink the whole shard.
  if (typeof msgTs === "number" && Number.isSafeInteger(Math.trunc(msgTs))) {
    return Math.trunc(msgTs);
  }
  return null;
}
