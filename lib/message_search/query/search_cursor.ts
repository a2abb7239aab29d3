/**
 * The opaque continuation cursor: `<base64url payload>.<base64url HMAC-SHA256>` signed
 * with the server's cursor key. The payload pins the request fingerprint, the manifest
 * revision the page was computed against, and the position (best_ts_ms + session_key) of
 * the last group returned; null position = before the first group (a budget page that
 * could return no group yet); and `seen`, the groups returned up to and including that
 * page, so a later page can state the query's whole total (null: not counted). The fingerprint is a keyed hash (fingerprintOf), so a
 * cursor reveals nothing about the query it belongs to. Invariants: nothing in a cursor is trusted before its MAC
 * verifies (constant-time compare); a cursor longer than CURSOR_MAX_CHARS is refused
 * unread. Errors: every defect is InvalidCursorError, never a crash; the engine decides
 * expiry (revision) and query mismatch (fingerprint).
 */
import { createHmac, timingSafeEqual } from "node:crypto";
import { InvalidCursorError } from "./errors.ts";

/** Longest cursor accepted (a real one is ~200 characters). */
export const CURSOR_MAX_CHARS = 2048;
const B64URL_RE = /^[A-Za-z0-9_-]+$/;

/** Where the next page starts: strictly after this group in page order. */
export interface CursorPosition {
  best: number;
  key: string;
}

/** What a cursor carries. */
export interface CursorState {
  /** Request fingerprint (fingerprintOf). */
  fp: string;
  /** Manifest revision of the snapshot. */
  rev: number;
  pos: CursorPosition | null;
  /** Groups on the pages up to this cursor (null when unknown: a version-1 cursor). */
  seen: number | null;
}

function b64url(bytes: Uint8Array): string {
  let bin = "";
  for (const b of bytes) bin += String.fromCharCode(b);
  return btoa(bin).replaceAll("+", "-").replaceAll("/", "_").replace(/=+$/, "");
}

function fromB64url(s: string): Uint8Array {
  const bin = atob(s.replaceAll("-", "+").replaceAll("_", "/"));
  return Uint8Array.from(bin, (c) => c.charCodeAt(0));
}

function mac(key: Uint8Array, payload: string): Uint8Array {
  // Cursor MACs sign base64url text and fingerprints are prefixed: the two never collide.
  return new Uint8Array(createHmac("sha256", key).update(payload).digest());
}

/** Keyed fingerprint of a request identity (normalizeRequest): 128 bits, base64url. */
export function fingerprintOf(key: Uint8Array, identity: string): string {
  return b64url(mac(key, `fingerprint:${identity}`).subarray(0, 16));
}

/** Signs `s` into a cursor string. */
export function mintCursor(key: Uint8Array, s: CursorState): string {
  const payload = b64url(
    new TextEncoder().encode(
      JSON.stringify([2, s.fp, s.rev, s.pos?.best ?? null, s.pos?.key ?? null, s.seen]),
    ),
  );
  return `${payload}.${b64url(mac(key, payload))}`;
}

/** Verifies and decodes a cursor; InvalidCursorError for anything not minted with `key`. */
export function openCursor(key: Uint8Array, cursor: string): CursorState {
  if (typeof cursor !== "string" || cursor.length === 0) {
    throw new InvalidCursorError("Cursor is empty");
  }
  if (cursor.length > CURSOR_MAX_CHARS) {
    throw new InvalidCursorError(`Cursor is ${cursor.length} characters, over ${CURSOR_MAX_CHARS}`);
  }
  const dot = cursor.indexOf(".");
  const payload = cursor.slice(0, dot);
  const sig = cursor.slice(dot + 1);
  if (dot < 0 || !B64URL_RE.test(payload) || !B64URL_RE.test(sig)) {
    throw new InvalidCursorError("Cursor is malformed: expected <payload>.<signature>");
  }
  const want = mac(key, payload);
  let got: Uint8Array;
  try {
    got = fromB64url(sig);
  } catch (err) {
    throw new InvalidCursorError("Cursor signature is not base64url", { cause: err });
  }
  if (got.length !== want.length || !timingSafeEqual(got, want)) {
    throw new InvalidCursorError("Cursor signature does not verify");
  }
  let raw: unknown;
  try {
    raw = JSON.parse(new TextDecoder("utf-8", { fatal: true }).decode(fromB64url(payload)));
  } catch (err) {
    // Only reachable with a leaked key or a format change: the MAC already verified.
    throw new InvalidCursorError("Cursor payload is not JSON", { cause: err });
  }
  // Version 1 (five fields) is still read: it carries no `seen`.
  const v = Array.isArray(raw) ? raw[0] : undefined;
  if (
    !Array.isArray(raw) || !((v === 1 && raw.length === 5) || (v === 2 && raw.length === 6)) ||
    typeof raw[1] !== "string" || !Number.isSafeInteger(raw[2]) ||
    !((raw[3] === null && raw[4] === null) ||
      (Number.isFinite(raw[3]) && typeof raw[4] === "string")) ||
    !(v === 1 || raw[5] === null || (Number.isSafeInteger(raw[5]) && raw[5] >= 0))
  ) {
    throw new InvalidCursorError("Cursor payload has an unknown shape");
  }
  const pos = raw[4] === null ? null : { best: raw[3] as number, key: raw[4] as string };
  return { fp: raw[1], rev: raw[2] as number, pos, seen: v === 2 ? raw[5] as number | null : null };
}
