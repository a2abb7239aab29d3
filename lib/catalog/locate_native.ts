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
 * Works on the spine index (native_page.ts): candidate rows are found in its columns
 * (line order, the canonical seq table, the 32-bit hash of a row's shown text or span)
 * and confirmed by deriving the row from its line, so a jump reads a handful of lines.
 */
import { capText, hash16Of, type Locator } from "../message_search/mod.ts";
import { legacyFollowUp, legacyTaskText, type LogEvent } from "../session_log/mod.ts";
import type { NativeSpine } from "./native_page.ts";
import type { NativeRow } from "./native_rows.ts";
import { spanForHash } from "./native_text.ts";
import { FLAG, KIND_MESSAGE, textHash, VARIANT } from "./spine_index.ts";

/** Where a locator landed, as a row index, or why it did not. */
export type Anchor =
  | { state: "resolved"; row: number; anchor: "exact" | "nearest"; sameMessage?: boolean }
  | { state: "stale"; reason: string }
  | { state: "unavailable"; reason: string };

type Data = Record<string, unknown>;

const stale = (reason: string): Anchor => ({ state: "stale", reason });
const unavailable = (reason: string): Anchor => ({ state: "unavailable", reason });

/** The first row at or after `line` (else the last row), anchored "nearest". */
function nearest(m: NativeSpine, line: number): Anchor {
  if (m.total === 0) return unavailable("the session renders no entries");
  const idx = m.index;
  // Rows are in line order: the first physical row on or after `line`, hidden ones skipped.
  let p = idx.firstRowFromEvent(firstEventFrom(m, line));
  while (p < idx.physicalRows && idx.isHidden(p)) p++;
  let at: number;
  if (p < idx.physicalRows) at = idx.visOf(p);
  else if (m.truncated && idx.lineCount >= line) at = idx.visibleRows;
  else at = m.total - 1;
  return { state: "resolved", row: at, anchor: "nearest" };
}

/** Ordinal of the first event on or after `line`. */
function firstEventFrom(m: NativeSpine, line: number): number {
  const idx = m.index;
  let lo = 0, hi = idx.events;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (idx.evLine.at(mid) < line) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/**
 * The first visible row (from physical row `from` on) passing the cheap `pre` filter
 * whose derived row passes `ok`, as a visible index; -1 when none.
 */
async function findRow(
  m: NativeSpine,
  from: number,
  pre: (p: number) => boolean,
  ok: (r: NativeRow) => boolean,
): Promise<number> {
  const idx = m.index;
  for (let p = from; p < idx.physicalRows; p++) {
    if (!pre(p) || idx.isHidden(p)) continue;
    if (ok(await m.physicalRow(p, { tools: false }))) return idx.visOf(p);
  }
  return -1;
}

function pastEnd(m: NativeSpine, line: number): Anchor {
  if (m.truncated) {
    return unavailable(`line ${line} is past the part of session.jsonl the detail view reads`);
  }
  return stale(
    `session.jsonl has ${m.index.lineCount} lines, shorter than line ${line} (truncated)`,
  );
}

/** Resolves a native-kind locator against `m`. */
export async function locateNative(m: NativeSpine, loc: Locator): Promise<Anchor> {
  if (loc.kind === "external_record_id" || loc.kind === "external_line") {
    return unavailable(`locator kind "${loc.kind}" does not apply to a native session`);
  }
  if (m.refused !== null) {
    return unavailable(`session.jsonl cannot be read (${m.refused})`);
  }
  switch (loc.kind) {
    case "native_message_id":
      return await messageId(m, loc);
    case "native_event":
      return await legacyEvent(m, loc);
    case "native_sidecar_span":
      return await sidecarSpan(m, loc);
  }
}

/** The conversation_message event carrying `seq`: the hinted line's, else the first. */
async function canonicalEvent(
  m: NativeSpine,
  seq: number,
  line: number,
): Promise<{ ordinal: number; ev: LogEvent } | null> {
  const idx = m.index;
  const isRow = (ev: LogEvent | null) =>
    ev?.event === "conversation_message" && (ev.data as Data | undefined)?.message_seq === seq;
  const hinted = idx.eventAtLine(line);
  const hev = hinted >= 0 ? await m.event(hinted) : null;
  if (hev && isRow(hev)) return { ordinal: hinted, ev: hev };
  for (let k = 0; k < idx.canonEv.length; k++) {
    if (idx.canonSeq.at(k) !== seq) continue;
    const ev = await m.event(idx.canonEv.at(k));
    if (ev && isRow(ev)) return { ordinal: idx.canonEv.at(k), ev };
  }
  return null;
}

async function messageId(
  m: NativeSpine,
  loc: Extract<Locator, { kind: "native_message_id" }>,
): Promise<Anchor> {
  const idx = m.index;
  const found = await canonicalEvent(m, loc.message_seq, loc.line);
  if (!found) {
    if (loc.line > idx.lineCount) return pastEnd(m, loc.line);
    return stale(`message seq ${loc.message_seq} is no longer in session.jsonl (rewritten)`);
  }
  const { ordinal, ev } = found;
  const lineNo = idx.evLine.at(ordinal);
  const d = (ev.data ?? {}) as Data;
  if (d.role === "user" && typeof d.text === "string") {
    if (hash16Of(capText(d.text).text) !== loc.hash) return stale("content hash mismatch");
    let p = idx.firstRowFromEvent(ordinal);
    for (; p < idx.physicalRows && idx.rowEv.at(p) === ordinal; p++) {
      if (idx.rowKind.at(p) === KIND_MESSAGE && !idx.isHidden(p)) {
        return { state: "resolved", row: idx.visOf(p), anchor: "exact" };
      }
    }
    return nearest(m, lineNo);
  }
  const file = ev.file;
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
  const twin = await spanRow(m, 0, file, d.model_offset);
  return twin >= 0
    ? { state: "resolved", row: twin, anchor: "nearest", sameMessage: true }
    : nearest(m, lineNo);
}

/** The first assistant row (from physical row `from`) whose span is `file` at `offset`. */
function spanRow(m: NativeSpine, from: number, file: string, offset: number): Promise<number> {
  const idx = m.index;
  const h = textHash(`${file}@${offset}`);
  return findRow(
    m,
    from,
    (p) => idx.rowVariant.at(p) === VARIANT.assistant && idx.rowHash.at(p) === h,
    (r) => r.span?.file === file && r.span.offset === offset,
  );
}

async function legacyEvent(
  m: NativeSpine,
  loc: Extract<Locator, { kind: "native_event" }>,
): Promise<Anchor> {
  const idx = m.index;
  if (loc.line > idx.lineCount) return pastEnd(m, loc.line);
  const i = idx.eventAtLine(loc.line);
  const ev = i >= 0 ? await m.event(i) : null;
  if (!ev) return stale(`line ${loc.line} no longer holds an event`);
  const text = legacyUserText(m, i, ev);
  if (text === null) return stale(`line ${loc.line} no longer holds a user message`);
  if (hash16Of(text) !== loc.hash) return stale("content hash mismatch");
  // The message row showing this text on that line; else the one a later line renders
  // (a legacy steer's text sits on steer_requested, its message row on steer_delivered);
  // else whatever row shows the text on that line (the steer request itself).
  const h = textHash(text);
  const shows = (p: number) =>
    (idx.rowFlags.at(p) & FLAG.hasText) !== 0 && idx.rowHash.at(p) === h &&
    idx.rowVariant.at(p) !== VARIANT.assistant;
  const onLine = (p: number) => idx.lineOf(p) === loc.line;
  const showing = (r: NativeRow) => r.text === text;
  const here = idx.firstRowFromEvent(i);
  const next = idx.firstRowFromEvent(i + 1);
  const isMsg = (p: number) => idx.rowKind.at(p) === KIND_MESSAGE;
  let at = await findRow(m, here, (p) => p < next && onLine(p) && isMsg(p) && shows(p), showing);
  if (at < 0) at = await findRow(m, next, (p) => isMsg(p) && shows(p), showing);
  if (at < 0) at = await findRow(m, here, (p) => p < next && onLine(p) && shows(p), showing);
  if (at >= 0) return { state: "resolved", row: at, anchor: "exact" };
  return nearest(m, loc.line);
}

/** The user text the legacy rules read from event `i`, or null. */
function legacyUserText(m: NativeSpine, i: number, ev: LogEvent): string | null {
  const d = (ev.data ?? {}) as Data;
  if (ev.event === "session_started") {
    return legacyTaskText(ev, { firstStarted: m.index.firstStarted === i, metaTask: m.metaTask });
  }
  if (ev.event === "steer_requested") return typeof d.text === "string" ? d.text : null;
  if (ev.event === "info") return legacyFollowUp(ev.message)?.text ?? null;
  return null;
}

async function sidecarSpan(
  m: NativeSpine,
  loc: Extract<Locator, { kind: "native_sidecar_span" }>,
): Promise<Anchor> {
  const span = await spanForHash(m.dir, { file: loc.file, offset: loc.offset, len: loc.len });
  if (!span.ok) return spanRefused(span.reason, loc.file);
  if (span.spanHash !== loc.hash) return stale("content hash mismatch");
  const idx = m.index;
  const i = idx.eventAtLine(loc.line);
  let at = -1;
  if (i >= 0) {
    const p = idx.firstRowFromEvent(i);
    const onLine = await spanRow(m, p, loc.file, loc.offset);
    if (onLine >= 0 && idx.lineOf(idx.physOf(onLine)) === loc.line) at = onLine;
  }
  if (at < 0) at = await spanRow(m, 0, loc.file, loc.offset);
  return at >= 0 ? { state: "resolved", row: at, anchor: "exact" } : nearest(m, loc.line);
}

function spanRefused(reason: string, file: string): Anchor {
  const name = JSON.stringify(file.slice(0, 120));
  if (reason === "past_end") return stale(`sidecar ${name} is shorter than the span (truncated)`);
  if (reason === "missing") return unavailable(`sidecar ${name} is missing`);
  if (reason === "bad_name") return unavailable(`${name} is not a session sidecar name`);
  return unavailable(`sidecar ${name} refused: ${reason.replace("_", " ")}`);
}
