/**
 * Locators: where a hit lives in its source, so the detail view can jump to it. Five
 * frozen, versioned variants (v: 1). Frozen means resolution verifies exactly what
 * extraction minted (same hash function, same span), so a changed source is detected as
 * stale instead of silently pointing at other text. Clients treat locators as opaque.
 * Hashes are the first 16 hex digits of sha256 over the UTF-8 bytes named by each variant.
 */
import { createHash } from "node:crypto";
import { z } from "zod";

const hash16 = z.string().regex(/^[0-9a-f]{16}$/);
const relFile = z.string().min(1).max(512);

export const LocatorSchema = z.discriminatedUnion("kind", [
  /** A native conversation_message row; `hash` is of the record text. */
  z.strictObject({
    v: z.literal(1),
    kind: z.literal("native_message_id"),
    message_seq: z.number().int().nonnegative(),
    line: z.number().int().positive(),
    hash: hash16,
  }),
  /** A legacy user-side event: 1-based line of session.jsonl; `hash` of the record text. */
  z.strictObject({
    v: z.literal(1),
    kind: z.literal("native_event"),
    line: z.number().int().positive(),
    hash: hash16,
  }),
  /** Legacy assistant text: a span of a turns/ sidecar; `hash` of the span bytes. */
  z.strictObject({
    v: z.literal(1),
    kind: z.literal("native_sidecar_span"),
    file: relFile,
    offset: z.number().int().nonnegative(),
    len: z.number().int().nonnegative(),
    line: z.number().int().positive(),
    hash: hash16,
  }),
  /** An external record with its own id (Claude uuid, Codex item id, Kimi agent-qualified id, Pi entry id). */
  z.strictObject({
    v: z.literal(1),
    kind: z.literal("external_record_id"),
    record_id: z.string().min(1).max(512),
    file: relFile,
    hash: hash16,
  }),
  /** An external record without an id: generation + 1-based line + hash of the line text. */
  z.strictObject({
    v: z.literal(1),
    kind: z.literal("external_line"),
    file: relFile,
    generation: z.number().int().nonnegative(),
    line: z.number().int().positive(),
    hash: hash16,
  }),
]);
export type Locator = z.infer<typeof LocatorSchema>;

/** sha256 → first 16 hex digits. Accepts a string (UTF-8) or bytes. */
export function hash16Of(data: string | Uint8Array): string {
  return createHash("sha256").update(data).digest("hex").slice(0, 16);
}

/** base64url of the locator JSON (what URLs carry). */
export function encodeLocator(loc: Locator): string {
  const bytes = new TextEncoder().encode(JSON.stringify(loc));
  let bin = "";
  for (const b of bytes) bin += String.fromCharCode(b);
  return btoa(bin).replaceAll("+", "-").replaceAll("/", "_").replace(/=+$/, "");
}

/** Longest locator parameter accepted (a real one is a few hundred bytes). */
export const LOCATOR_PARAM_MAX = 4096;

/**
 * Parses a `locate=` value: the locator JSON itself, or base64url of it. Returns null for
 * anything malformed (the caller answers 400); never throws.
 */
export function decodeLocator(param: string): Locator | null {
  if (param.length === 0 || param.length > LOCATOR_PARAM_MAX) return null;
  let json: string;
  if (param.trimStart().startsWith("{")) json = param;
  else {
    if (!/^[A-Za-z0-9_-]+$/.test(param)) return null;
    try {
      const bin = atob(param.replaceAll("-", "+").replaceAll("_", "/"));
      json = new TextDecoder("utf-8", { fatal: true }).decode(
        Uint8Array.from(bin, (c) => c.charCodeAt(0)),
      );
    } catch {
      // Not base64url or not UTF-8: malformed by definition.
      return null;
    }
  }
  let raw: unknown;
  try {
    raw = JSON.parse(json);
  } catch {
    // Not JSON: malformed.
    return null;
  }
  const r = LocatorSchema.safeParse(raw);
  return r.success ? r.data : null;
}
