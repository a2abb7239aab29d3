/**
 * The Deep Search resume cursor: opaque base64url of a small JSON object. It comes back
 * from the network, so it is validated strictly before anything is opened: length,
 * alphabet, UTF-8, JSON, a strict schema, the key grammar, an allow-listed native file
 * name, and the fingerprint of the query it was minted for (a cursor of another query
 * is refused, not silently reused). Invalid → InvalidInputError (400).
 * v2 fields: q = hash16 of the folded needle; c = the session's created ms (the scan
 * order key, so a deleted session's successors are still found); k = session key
 * (`<source>:<id>`); w = where its bytes come from (native: the session directory;
 * file: the agent's files the index names; vault: the vault's copies of a gone session);
 * f = the file (native: relative name; file/vault: the path the agent kept it at); o =
 * byte offset to resume at (a `.zst` rollout's: decompressed); n = the line number at o;
 * m = o is inside a line (an over-long line or a budget stop split it).
 * A cursor's `f` is never opened: for file/vault units it only orders against the list
 * of files the index (or the vault's catalog) names for that key, and only those are read.
 * v1 (native only: s = session id) is still accepted and read as a native v2 cursor.
 */
import { z } from "zod";
import { InvalidInputError } from "../errors.ts";
import { hash16Of, SOURCES } from "../message_search/mod.ts";
import { SESSION_ID_GRAMMAR } from "../session_log/mod.ts";
import { isScannedName } from "./deep_files.ts";

/** Longest cursor accepted (a real one is ~200-600 characters: paths are long). */
export const DEEP_CURSOR_MAX_CHARS = 4096;
/** Longest external file path a cursor may name. */
const PATH_MAX_CHARS = 2048;
/** An external session id (the catalog's key grammar, minus the source). */
const EXTERNAL_ID = /^[A-Za-z0-9][A-Za-z0-9._:-]{0,199}$/;

const common = {
  q: z.string().regex(/^[0-9a-f]{16}$/),
  c: z.number().int().min(-1).max(Number.MAX_SAFE_INTEGER),
  o: z.number().int().nonnegative().max(Number.MAX_SAFE_INTEGER),
  n: z.number().int().positive().max(Number.MAX_SAFE_INTEGER),
  m: z.boolean(),
};

const V1Schema = z.strictObject({
  v: z.literal(1),
  s: z.string().regex(SESSION_ID_GRAMMAR),
  f: z.string().max(300).refine(isScannedName),
  ...common,
});

const V2Schema = z.strictObject({
  v: z.literal(2),
  k: z.string().max(260),
  w: z.enum(["native", "file", "vault"]),
  f: z.string().min(1).max(PATH_MAX_CHARS),
  ...common,
}).refine(validKey);

/** Where a unit's bytes come from. */
export type DeepWhere = "native" | "file" | "vault";

/** A decoded cursor. */
export type DeepCursor = z.infer<typeof V2Schema>;

function validKey(c: { k: string; w: DeepWhere; f: string }): boolean {
  const i = c.k.indexOf(":");
  const source = c.k.slice(0, i);
  const id = c.k.slice(i + 1);
  if (i < 1 || !(SOURCES as readonly string[]).includes(source)) return false;
  if (c.w === "native") {
    return source === "intendant" && SESSION_ID_GRAMMAR.test(id) && isScannedName(c.f);
  }
  return EXTERNAL_ID.test(id) && !id.includes("..") && c.f.startsWith("/") &&
    !c.f.includes("\0");
}

/** The fingerprint binding a cursor to its query. */
export function needleFingerprint(needle: string): string {
  return hash16Of(`deep-search:v1:${needle}`);
}

/** Encodes a cursor (v1 objects too, for tests of the old shape). */
export function encodeDeepCursor(c: DeepCursor | z.infer<typeof V1Schema>): string {
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
  let c: DeepCursor;
  const v1 = V1Schema.safeParse(raw);
  if (v1.success) {
    const { s, v: _v, ...rest } = v1.data;
    c = { ...rest, v: 2, k: `intendant:${s}`, w: "native" };
  } else {
    const v2 = V2Schema.safeParse(raw);
    if (!v2.success) throw bad("unexpected fields");
    c = v2.data;
  }
  if (c.q !== needleFingerprint(needle)) throw bad("it belongs to another query");
  return c;
}
