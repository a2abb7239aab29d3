/**
 * Reading the text a native row or locator names: model sidecar spans and command
 * output excerpts. Names come from session.jsonl or from a locator, and a session's
 * commands can write into its directory (they get INTENDANT_LOG_DIR), so both are
 * untrusted: only `turns/<turn file>` names (readSessionSpan's sidecar grammar, minus
 * its plain top-level names) and runtime log names `{nonce}_{32-hex}_{stdout|stderr|pty}.log`
 * are ever opened, and only through openInside (no symlinks, hardlinks, FIFOs, swaps).
 * `spanForHash` reproduces the extractor's mint exactly (SPAN_HASH_MAX_BYTES prefix,
 * text decoded from the first RECORD_TEXT_CAP_BYTES + 4 bytes), so a verified locator
 * means the same bytes are still there.
 */
import { SPAN_HASH_MAX_BYTES } from "../message_search/mod.ts";
import { capText, hash16Of, RECORD_TEXT_CAP_BYTES } from "../message_search/mod.ts";
import { parseTurnFileName, TURNS_DIR } from "../session_log/mod.ts";
import { openInside, type Refusal } from "./safe_fs.ts";

/**
 * Longest sidecar span prefix hashed for a locator. Frozen with the locator format: the
 * intendant extractor mints with the same value (intendant_events.ts SPAN_HASH_MAX_BYTES).
 */
export { SPAN_HASH_MAX_BYTES };
const RUNTIME_LOG = /^[A-Za-z0-9_-]{1,48}_[0-9a-f]{32}_(stdout|stderr|pty)\.log$/;
const decoder = new TextDecoder();

/** True for `turns/<turn file name>`. */
export function isTurnRel(rel: string): boolean {
  const parts = rel.split("/");
  return parts.length === 2 && parts[0] === TURNS_DIR && parseTurnFileName(parts[1]!) !== null;
}

/** True for a runtime log name at the top of the session dir. */
export function isRuntimeLogName(name: string): boolean {
  return RUNTIME_LOG.test(name);
}

/** Text read for display, or why it could not be. */
export type TextRead =
  | { ok: true; text: string; truncated: boolean; bytes: number }
  | { ok: false; reason: Refusal | "past_end" };

/** Reads a sidecar span for display, capped at `capBytes` on a character boundary. */
export async function readSpanText(
  dir: string,
  span: { file: string; offset: number; len: number | null },
  capBytes: number,
): Promise<TextRead> {
  if (!isTurnRel(span.file)) return { ok: false, reason: "bad_name" };
  return await readCapped(dir, span.file, span.offset, span.len, capBytes);
}

/** The head of a command output file (runtime log or turn file) for display. */
export async function readExcerpt(dir: string, rel: string, capBytes: number): Promise<TextRead> {
  if (!isTurnRel(rel) && !isRuntimeLogName(rel)) return { ok: false, reason: "bad_name" };
  return await readCapped(dir, rel, 0, null, capBytes);
}

async function readCapped(
  dir: string,
  rel: string,
  offset: number,
  len: number | null,
  capBytes: number,
): Promise<TextRead> {
  const opened = await openInside(dir, rel);
  if (!opened.ok) return opened;
  const { file } = opened;
  try {
    if (offset > file.size) return { ok: false, reason: "past_end" };
    const total = len === null ? file.size - offset : Math.min(len, file.size - offset);
    // Four extra bytes let capText find a character boundary at the cap.
    const bytes = await file.read(offset, Math.min(total, capBytes + 4));
    const capped = capText(decoder.decode(bytes), capBytes);
    return {
      ok: true,
      text: capped.text,
      truncated: capped.truncated || total > bytes.length,
      bytes: total,
    };
  } finally {
    await file.close();
  }
}

/** A span read the way the extractor minted its locator hashes. */
export type SpanHash =
  | { ok: true; spanHash: string; textHash: string; text: string }
  | { ok: false; reason: Refusal | "past_end" };

/**
 * Reads `len` bytes at `offset` of a turns/ sidecar: `spanHash` is the native_sidecar_span
 * hash (first SPAN_HASH_MAX_BYTES bytes), `textHash` the native_message_id hash (of the
 * record text: decoded, capped at RECORD_TEXT_CAP_BYTES). "past_end" when the file no
 * longer holds the span (the extractor would have refused it too).
 */
export async function spanForHash(
  dir: string,
  span: { file: string; offset: number; len: number },
): Promise<SpanHash> {
  if (!isTurnRel(span.file)) return { ok: false, reason: "bad_name" };
  const opened = await openInside(dir, span.file);
  if (!opened.ok) return opened;
  const { file } = opened;
  try {
    const want = Math.min(span.len, SPAN_HASH_MAX_BYTES);
    if (span.offset + want > file.size) return { ok: false, reason: "past_end" };
    const bytes = await file.read(span.offset, want);
    if (bytes.length < want) return { ok: false, reason: "past_end" };
    const text = decoder.decode(
      bytes.subarray(0, Math.min(bytes.length, RECORD_TEXT_CAP_BYTES + 4)),
    );
    return { ok: true, spanHash: hash16Of(bytes), textHash: hash16Of(capText(text).text), text };
  } finally {
    await file.close();
  }
}
