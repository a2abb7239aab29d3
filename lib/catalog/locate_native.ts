/**
 * Jump-to-hit on a native session. Resolution verifies exactly what the intendant
 * extractor minted (same text, same cap, same span prefix, same hash), so a changed
 * source reads as stale instead of silently pointing at other text:
 *  - native_message_id: the conversation_message row with that message_seq (the line
 *    hint first, then a scan), verified by the hash of its text (user: inline; assistant:
 *    its sidecar span). A user row renders its own entry (exact); an assistant row
 *    renders none, so its model_response twin anchors it (nearest);
 *  - native_event (legacy user text): that line's event, re-read with the legacy rules
 *    (session_started task, steer_requested text, "Round N follow-up:" info) and hashed;
 *  - native_sidecar_span (legacy assistant text): the span itself, read through the
 *    contained reader and hashed; anchored on the model_response row naming that span.
 * Degradations: stale = the source moved on (hash mismatch, line or span past the end,
 * the row gone); unavailable = nothing usable backs it (spine or sidecar missing or
 * refused: symlink, hardlink, not a regular file, not a sidecar name; external kinds).
 */
import { capText, hash16Of, type Locator } from "../message_search/mod.ts";
import type { ReadEvent } from "../session_log/mod.ts";
import type { NativeModel } from "./native_detail.ts";
import type { NativeRow } from "./native_rows.ts";
import { spanForHash } from "./native_text.ts";

/** Where a locator landed, as a row index, or why it did not. */
export type Anchor =
  | { state: "resolved"; row: number; anchor: "exact" | "nearest"; sameMessage?: boolean }
  | { state: "stale"; reason: string }
  | { state: "unavailable"; reason: string };

const FOLLOW_UP = /^Round (\d+) follow-up: ([\s\S]*)$/;
type Data = Record<string, unknown>;

const stale = (reason: string): Anchor => ({ state: "stale", reason });
const unavailable = (reason: string): Anchor => ({ state: "unavailable", reason });

/** The first row at or after `line` (else the last row), anchored "nearest". */
function nearest(rows: readonly NativeRow[], line: number): Anchor {
  if (rows.length === 0) return unavailable("the session renders no entries");
  const at = rows.findIndex((r) => r.line >= line);
  return { state: "resolved", row: at >= 0 ? at : rows.length - 1, anchor: "nearest" };
}

function pastEnd(m: NativeModel, line: number): Anchor {
  if (m.spineTruncated) {
    return unavailable(`line ${line} is past the part of session.jsonl the detail view reads`);
  }
  return stale(`session.jsonl has ${m.lineCount} lines, shorter than line ${line} (truncated)`);
}

/** Resolves a native-kind locator against `m`. */
export async function locateNative(m: NativeModel, loc: Locator): Promise<Anchor> {
  if (loc.kind === "external_record_id" || loc.kind === "external_line") {
    return unavailable(`locator kind "${loc.kind}" does not apply to a native session`);
  }
  if (m.spineRefused !== null) {
    return unavailable(`session.jsonl cannot be read (${m.spineRefused})`);
  }
  switch (loc.kind) {
    case "native_message_id":
      return await messageId(m, loc);
    case "native_event":
      return legacyEvent(m, loc);
    case "native_sidecar_span":
      return await sidecarSpan(m, loc);
  }
}

async function messageId(
  m: NativeModel,
  loc: Extract<Locator, { kind: "native_message_id" }>,
): Promise<Anchor> {
  const isRow = (e: ReadEvent) =>
    e.event.event === "conversation_message" &&
    (e.event.data as Data | undefined)?.message_seq === loc.message_seq;
  const hinted = m.events.find((e) => e.lineNo === loc.line);
  const ev = hinted && isRow(hinted) ? hinted : m.events.find(isRow);
  if (!ev) {
    if (loc.line > m.lineCount) return pastEnd(m, loc.line);
    return stale(`message seq ${loc.message_seq} is no longer in session.jsonl (rewritten)`);
  }
  const d = (ev.event.data ?? {}) as Data;
  if (d.role === "user" && typeof d.text === "string") {
    if (hash16Of(capText(d.text).text) !== loc.hash) return stale("content hash mismatch");
    const at = m.rows.findIndex((r) => r.line === ev.lineNo && r.kind === "message");
    return at >= 0 ? { state: "resolved", row: at, anchor: "exact" } : nearest(m.rows, ev.lineNo);
  }
  const file = ev.event.file;
  if (
    d.role !== "assistant" || !file || typeof d.model_offset !== "number" ||
    typeof d.model_bytes !== "number"
  ) {
    return stale(`message seq ${loc.message_seq} no longer has readable text`);
  }
  const span = await spanForHash(m.dir, { file, offset: d.model_offset, len: d.model_bytes });
  if (!span.ok) return spanRefused(span.reason, file);
  if (span.textHash !== loc.hash) return stale("content hash mismatch");
  // The canonical row renders no entry: its model_response twin (same span) anchors it.
  const twin = m.rows.findIndex((r) => r.span?.file === file && r.span.offset === d.model_offset);
  return twin >= 0
    ? { state: "resolved", row: twin, anchor: "nearest", sameMessage: true }
    : nearest(m.rows, ev.lineNo);
}

function legacyEvent(m: NativeModel, loc: Extract<Locator, { kind: "native_event" }>): Anchor {
  if (loc.line > m.lineCount) return pastEnd(m, loc.line);
  const i = m.events.findIndex((e) => e.lineNo === loc.line);
  if (i < 0) return stale(`line ${loc.line} no longer holds an event`);
  const text = legacyUserText(m, i);
  if (text === null) return stale(`line ${loc.line} no longer holds a user message`);
  if (hash16Of(text) !== loc.hash) return stale("content hash mismatch");
  // The message row showing this text on that line; else the one a later line renders
  // (a legacy steer's text sits on steer_requested, its message row on steer_delivered);
  // else whatever row shows the text on that line (the steer request itself).
  const showing = (r: NativeRow) => r.text === text;
  let at = m.rows.findIndex((r) => r.line === loc.line && r.kind === "message" && showing(r));
  if (at < 0) at = m.rows.findIndex((r) => r.line > loc.line && r.kind === "message" && showing(r));
  if (at < 0) at = m.rows.findIndex((r) => r.line === loc.line && showing(r));
  if (at >= 0) return { state: "resolved", row: at, anchor: "exact" };
  return nearest(m.rows, loc.line);
}

/** The user text the legacy rules read from event `i`, or null. */
function legacyUserText(m: NativeModel, i: number): string | null {
  const ev = m.events[i]!.event;
  const d = (ev.data ?? {}) as Data;
  if (ev.event === "session_started") {
    if (typeof d.task === "string") return d.task;
    if (ev.message !== undefined) return ev.message;
    const first = m.events.findIndex((e) => e.event.event === "session_started") === i;
    return first ? m.meta?.task ?? null : null;
  }
  if (ev.event === "steer_requested") return typeof d.text === "string" ? d.text : null;
  if (ev.event === "info" && ev.message) return FOLLOW_UP.exec(ev.message)?.[2] ?? null;
  return null;
}

async function sidecarSpan(
  m: NativeModel,
  loc: Extract<Locator, { kind: "native_sidecar_span" }>,
): Promise<Anchor> {
  const span = await spanForHash(m.dir, { file: loc.file, offset: loc.offset, len: loc.len });
  if (!span.ok) return spanRefused(span.reason, loc.file);
  if (span.spanHash !== loc.hash) return stale("content hash mismatch");
  const same = (r: NativeRow) => r.span?.file === loc.file && r.span.offset === loc.offset;
  let at = m.rows.findIndex((r) => same(r) && r.line === loc.line);
  if (at < 0) at = m.rows.findIndex(same);
  return at >= 0 ? { state: "resolved", row: at, anchor: "exact" } : nearest(m.rows, loc.line);
}

function spanRefused(reason: string, file: string): Anchor {
  const name = JSON.stringify(file.slice(0, 120));
  if (reason === "past_end") return stale(`sidecar ${name} is shorter than the span (truncated)`);
  if (reason === "missing") return unavailable(`sidecar ${name} is missing`);
  if (reason === "bad_name") return unavailable(`${name} is not a session sidecar name`);
  return unavailable(`sidecar ${name} refused: ${reason.replace("_", " ")}`);
}
