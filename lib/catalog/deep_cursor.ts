/**
 * The Deep Search resume cursor: opaque base64url of a small JSON object. It comes back
 * from the network, so it is validated strictly before anything is opened: length,
 * alphabet, UTF-8, JSON, a strict schema, the session id grammar, an allow-listed file
 * name, and the fingerprint of the query it was minted for (a cursor of another query
 * is refused, not silently reused). Invalid → InvalidInputError (400).
 * Fields: q = hash16 of the folded needle; c = the session's created ms (the scan order
 * key, so a deleted session's successors are still found); s = session id; f = file
 * (relative); o = byte offset to resume at; n = the line number at o; m = o is inside a
 * line (an over-long line or a budget stop split it).
 */
import { z } from "zod";
import { InvalidInputError } from "../errors.ts";
import { hash16Of } from "../message_search/mod.ts";
import { SESSION_ID_GRAMMAR } from "../session_log/mod.ts";
import { isScannedName } from "./deep_files.ts";

/** Longest cursor accepted (a real one is ~200 characters). */
export const DEEP_CURSOR_MAX_CHARS = 1024;

const CursorSchema = z.strictObject({
  v: z.literal(1),
  q: z.string().regex(/^[0-9a-f]{16}$/),
  c: z.number().int().min(-1).max(Number.MAX_SAFE_INTEGER),
  s: z.string().regex(SESSION_ID_GRAMMAR),
  f: z.string().max(300).refine(isScannedName),
  o: z.number().int().nonnegative().max(Number.MAX_SAFE_INTEGER),
  n: z.number().int().positive().max(Number.MAX_SAFE_INTEGER),
  m: z.boolean(),
});
/** A decoded cursor. */
export type DeepCursor = z.infer<typeof CursorSchema>;

/** The fingerprint binding a cursor to its query. */
export function needleFingerprint(needle: string): string {
  return hash16Of(`deep-search:v1:${needle}`);
}

/** Encodes a cursor. */
export function encodeDeepCursor(c: DeepCursor): string {
  const bytes = new TextEncoder().encode(JSON.stringify(c));
  let bin = "";
  for (const b of bytes) bin += String.fromCharCode(b);
  return btoa(bin).replaceAll("+", "-").replaceAll("/", "_").replace(/=+$/, "");
}

/** Decodes and validates a cursor for `needle`; InvalidInputError when it is not one. */
export function decodeDeepCursor(param: string, needle: string): DeepCursor {
  const bad = (why: string, cause?: unknown) =>
    new InvalidInputError(`Invalid Deep Search cursor: ${why}`, { cause });
  if (typeof param !== "string" || param.length === 0 || param.length > DEEP_CURSOR_MAX_CHARS) {
    throw bad("wrong length");
  }
  if (!/^[A-Za-z0-9_-]+$/.test(param)) throw bad("not base64url");
  let raw: unknown;
  try {
    const bin = atob(param.replaceAll("-", "+").replaceAll("_", "/"));
    const json = new TextDecoder("utf-8", { fatal: true }).decode(
      Uint8Array.from(bin, (ch) => ch.charCodeAt(0)),
    );
    raw = JSON.parse(json);
  } catch (err) {
    throw bad("not base64url JSON", err);
  }
  const r = CursorSchema.safeParse(raw);
  if (!r.success) throw bad("unexpected fields");
  if (r.data.q !== needleFingerprint(needle)) throw bad("it belongs to another query");
  return r.data;
}
