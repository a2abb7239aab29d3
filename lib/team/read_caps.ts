/**
 * What a reader takes from the team database (H6). Every other machine controls what it
 * publishes: an honest one caps a message at 256 KiB and a title at ~100 code points when
 * it indexes (lib/message_search record.ts, extract framework title.ts), a hostile one
 * publishes a 60 MB record or a 1 MB title — which took another machine's daemon from 110
 * to 1,114 MB and put a 64 MB body on /api/team/session. So readers never SELECT a
 * column whole: the SQL takes one character past the cap (`left(col, cap + 1)`), so the
 * server sends at most that much and the reader knows whether it cut; the text is then cut
 * to the local caps on a character boundary and marked (`truncated` on a message, "…" on
 * a label). A remote session page also stops once its texts reach REMOTE_PAGE_TEXT_CHARS
 * (the next page starts where it stopped), and its marks are dropped past
 * REMOTE_MARKS_MAX_CHARS (said so in `marks_cut`).
 */
import { capText, RECORD_TEXT_CAP_BYTES } from "../message_search/mod.ts";

/** Characters of a message taken from the server: its byte cap is reached before them. */
export const TEXT_CAP_CHARS = RECORD_TEXT_CAP_BYTES;
/** Characters of a title or name (producers cut at 100–120 code points). */
export const TITLE_CAP_CHARS = 200;
/** Characters of a project path. */
export const PROJECT_CAP_CHARS = 4096;
/** Characters of an id, a record id or a locator (ours are far shorter). */
export const ID_CAP_CHARS = 4096;
/** Text characters one remote session page carries (it ends early past them). */
export const REMOTE_PAGE_TEXT_CHARS = 2 * 1024 * 1024;
/** Characters of a session's published marks taken (dropped whole past them). */
export const REMOTE_MARKS_MAX_CHARS = 1024 * 1024;

/** `left(col, cap + 1) AS alias`: at most one character past the cap crosses the wire. */
export function capped(col: string, cap: number, alias: string): string {
  return `left(${col}, ${cap + 1}) AS ${alias}`;
}

/** A message text as the reader keeps it: the local byte cap, `cut` when anything went. */
export function capMessage(text: string): { text: string; cut: boolean } {
  const over = text.length > TEXT_CAP_CHARS;
  const t = capText(over ? text.slice(0, TEXT_CAP_CHARS) : text);
  return { text: t.text, cut: over || t.truncated };
}

/** A label (title, project, id) cut at `cap` characters with "…" when longer. */
export function capLabel(s: string | null, cap: number): string | null {
  if (s === null || s.length <= cap) return s;
  // Never half a surrogate pair.
  const head = /[\ud800-\udbff]$/.test(s.slice(0, cap)) ? s.slice(0, cap - 1) : s.slice(0, cap);
  return head + "…";
}
