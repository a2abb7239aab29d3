/**
 * The first step of every JSONL line parser: one line's bytes (without its "\n") → blank,
 * malformed, or the parsed JSON value. Never throws.
 * Decoding is lenient, as every extractor reads: stray non-UTF-8 bytes inside a valid
 * JSON line decode to U+FFFD and the message is still indexed (never lost to one byte); a
 * line that is not JSON is `malformed_line`, counted by the caller, never fatal. A line of
 * only whitespace is `blank_line` (JSONL writers leave them; they are not counted).
 */

/** What {@link parseJsonLine} made of a line. */
export type JsonLine =
  | { kind: "json"; value: unknown }
  | { kind: "skip"; reason: "blank_line" | "malformed_line" };

const utf8 = new TextDecoder("utf-8");

/** Decodes and parses one line (see the header). */
export function parseJsonLine(bytes: Uint8Array): JsonLine {
  if (bytes.length === 0) return { kind: "skip", reason: "blank_line" };
  const text = utf8.decode(bytes);
  if (text.trim() === "") return { kind: "skip", reason: "blank_line" };
  try {
    return { kind: "json", value: JSON.parse(text) };
  } catch {
    // Malformed JSON is data: the caller counts it.
    return { kind: "skip", reason: "malformed_line" };
  }
}

/** A JSON object (not null, not an array). */
export function isJsonObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}
