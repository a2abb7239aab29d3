/**
 * Goose's prose rules (formats-more §7.3–§7.5) over message rows already read from either
 * store (`sessions.db` or a legacy `.jsonl`): pure, no I/O.
 *
 * - A row is `{role, content: MessageContent[], metadata: {userVisible, agentVisible}}`.
 * - User prose: the `text` items of a `user` row whose `userVisible` is not false, unless
 *   the row carries a `toolResponse` (tool results travel as user rows). Assistant prose:
 *   the `text` items of an `assistant` row whose `userVisible` is not false. Agent-only
 *   rows (summaries, continuation prompts — often `role:"user"`) are never prose.
 * - Never: thinking, redactedThinking, toolRequest, toolResponse, frontendToolRequest,
 *   actionRequired, toolConfirmationRequest, systemNotification, image, the session name.
 * - Text is stripped of invisible Unicode tag characters U+E0000–U+E007F, as Goose strips
 *   them when it reads a message (`deserialize_sanitized_content`).
 * - Several text items in one row are one record, joined by a blank line.
 * Ids: `message_id` when the row has one (v7+), else a content id `c:<hash12>:<k>` (the
 * k-th row with that role+text): rowids are rewritten by `replace_conversation`, and an
 * ordinal shifts when a row vanishes, but the content id survives both.
 * Locator: `external_record_id`, record_id = that id, file = the store's path relative to
 * the data dir (`sessions/sessions.db`, `sessions/<name>.jsonl`), hash of the text.
 * Time: `created` is Unix SECONDS (×1000); the DB's `timestamp` text is the fallback.
 */
import { hash16Of } from "../../locator.ts";
import { countSkip } from "../framework/plugin.ts";
import type { DerivedRecord } from "../framework/sqlite_rederive.ts";

/** One message row, normalised from either store. */
export interface GooseRow {
  /** `message_id` (v7+ DB, or the JSONL `id`); null when absent. */
  messageId: string | null;
  role: unknown;
  /** Seconds since the epoch (`created_timestamp` / `created`). */
  createdSec: unknown;
  /** SQLite `CURRENT_TIMESTAMP` text, UTC (DB only). */
  timestamp?: unknown;
  /** `metadata.userVisible` (undefined: absent → visible). */
  userVisible: unknown;
  /** The content array was valid (an array of items). */
  contentOk: boolean;
  /** Whether any item is a `toolResponse`. */
  hasToolResponse: boolean;
  /** The `text` items' texts in order; null = not valid UTF-8; non-string = wrong type. */
  texts: unknown[];
}

// U+E0000–U+E007F as surrogate pairs: \uDB40[\uDC00-\uDC7F].
const TAG_CHARS = /\uDB40[\uDC00-\uDC7F]/g;

/** Removes invisible Unicode tag characters (what Goose removes on read). */
export function stripTagChars(s: string): string {
  return s.includes("\uDB40") ? s.replace(TAG_CHARS, "") : s;
}

function tsOf(row: GooseRow): number {
  const s = row.createdSec;
  if (typeof s === "number" && Number.isFinite(s)) return Math.trunc(s * 1000);
  if (typeof s === "bigint") return Number(s) * 1000;
  if (typeof row.timestamp === "string") {
    const t = Date.parse(`${row.timestamp.replace(" ", "T")}Z`);
    if (Number.isFinite(t)) return t;
  }
  return 0;
}

/** The session's prose records (and the first user prose, for a title). */
export function gooseProse(
  rows: readonly GooseRow[],
  o: { file: string; subagent: boolean },
): { records: DerivedRecord[]; firstUser: string | null; skipped: Record<string, number> } {
  const skipped: Record<string, number> = {};
  const records: DerivedRecord[] = [];
  const occurrences = new Map<string, number>();
  let firstUser: string | null = null;
  for (const row of rows) {
    if ((row.role !== "user" && row.role !== "assistant") || !row.contentOk) {
      countSkip(skipped, "message_invalid");
      continue;
    }
    if (row.userVisible === false || row.userVisible === 0) continue;
    if (row.role === "user" && row.hasToolResponse) continue;
    if (row.texts.some((t) => t === null)) {
      countSkip(skipped, "invalid_utf8");
      continue;
    }
    const parts: string[] = [];
    let bad = false;
    for (const t of row.texts) {
      if (typeof t !== "string") bad = true;
      else {
        const clean = stripTagChars(t);
        if (clean.trim().length > 0) parts.push(clean);
      }
    }
    if (bad) countSkip(skipped, "content_invalid");
    if (parts.length === 0) continue;
    const text = parts.join("\n\n");
    let id = row.messageId;
    if (id === null || id.length === 0) {
      const h = hash16Of(`${row.role}\n${text}`).slice(0, 12);
      const k = occurrences.get(h) ?? 0;
      occurrences.set(h, k + 1);
      id = `c:${h}:${k}`;
    }
    if (row.role === "user" && firstUser === null) firstUser = text;
    records.push({
      id,
      role: row.role,
      ts_ms: tsOf(row),
      text,
      locator: {
        v: 1,
        kind: "external_record_id",
        record_id: id.slice(0, 512),
        file: o.file,
        hash: hash16Of(text),
      },
      subagent: o.subagent,
      superseded: false,
    });
  }
  return { records, firstUser, skipped };
}

/** A title: the session name, else the first user prose (≤ 100 code points). */
export function gooseTitle(name: unknown, firstUser: string | null): string | null {
  if (typeof name === "string" && name.trim().length > 0) return name.trim();
  return firstUser === null ? null : [...firstUser.trim()].slice(0, 100).join("");
}
