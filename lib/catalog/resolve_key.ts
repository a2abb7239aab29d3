/**
 * Session keys and ids from the network. The grammar check runs BEFORE any file-system
 * call (reliability id D6 in tests/RELIABILITY.md: Hono decodes `%2F` inside path
 * params, so `..%2F..%2Fetc` arrives as `../../etc`): anything outside
 * `[A-Za-z0-9._:-]`, longer than 200 characters, or holding "..", "/", "\", NUL or "%" is an InvalidInputError. Native ids
 * must also match the session directory grammar; external ids must exist in the
 * manifest. A native session is found by full id or unique prefix of its directory name.
 */
import { join } from "node:path";
import { AmbiguousPrefixError, InvalidInputError, NotFoundError } from "../errors.ts";
import { sessionKey, type Source, SOURCES } from "../message_search/mod.ts";
import { SESSION_ID_GRAMMAR } from "../session_log/mod.ts";
import type { CatalogDeps } from "./types.ts";

/** Longest key or id accepted. */
export const KEY_MAX_CHARS = 200;
const KEY_CHARS = /^[A-Za-z0-9._:-]+$/;
/** External ids: Codex/Claude/Pi UUIDs, Kimi `session_<uuid>`. */
export const EXTERNAL_ID_GRAMMAR = /^[A-Za-z0-9][A-Za-z0-9._-]{0,199}$/;

/** A parsed key: `source` null means "a native id or prefix, no source given". */
export interface ParsedKey {
  source: Source | null;
  id: string;
}

/** Checks the grammar without touching the file system; throws InvalidInputError. */
export function parseSessionKey(idOrKey: unknown): ParsedKey {
  if (typeof idOrKey !== "string" || idOrKey.length === 0) {
    throw new InvalidInputError("Invalid session id: expected a non-empty string");
  }
  const shown = JSON.stringify(idOrKey.slice(0, 60));
  if (
    idOrKey.length > KEY_MAX_CHARS || idOrKey.includes("..") || !KEY_CHARS.test(idOrKey)
  ) {
    // KEY_CHARS already excludes "/", "\", NUL, "%" and every non-ASCII look-alike.
    throw new InvalidInputError(
      `Invalid session id ${shown}: expected [A-Za-z0-9._:-], at most ${KEY_MAX_CHARS} characters`,
    );
  }
  const colon = idOrKey.indexOf(":");
  if (colon < 0) {
    if (!SESSION_ID_GRAMMAR.test(idOrKey)) {
      throw new InvalidInputError(`Invalid session id ${shown}: not a native session id`);
    }
    return { source: null, id: idOrKey };
  }
  const source = idOrKey.slice(0, colon);
  const id = idOrKey.slice(colon + 1);
  if (!(SOURCES as readonly string[]).includes(source)) {
    throw new InvalidInputError(
      `Invalid session key ${shown}: unknown source "${source.slice(0, 20)}"`,
    );
  }
  const grammar = source === "intendant" ? SESSION_ID_GRAMMAR : EXTERNAL_ID_GRAMMAR;
  if (!grammar.test(id)) throw new InvalidInputError(`Invalid session key ${shown}`);
  return { source: source as Source, id };
}

/** A resolved session. `dir` is set for native sessions. */
export interface ResolvedKey {
  key: string;
  source: Source;
  session_id: string;
  dir?: string;
}

/** Names of the session directories under logsDir (real directories matching the grammar). */
export async function nativeSessionIds(logsDir: string): Promise<string[]> {
  const ids: string[] = [];
  try {
    for await (const e of Deno.readDir(logsDir)) {
      // readDir does not follow symlinks: a symlinked "session" is never ours.
      if (e.isDirectory && !e.isSymlink && SESSION_ID_GRAMMAR.test(e.name)) ids.push(e.name);
    }
  } catch (err) {
    if (err instanceof Deno.errors.NotFound) return [];
    throw err;
  }
  return ids.sort();
}

async function resolveNative(logsDir: string, idOrPrefix: string): Promise<ResolvedKey | null> {
  const ids = await nativeSessionIds(logsDir);
  const hit = ids.includes(idOrPrefix)
    ? [idOrPrefix]
    : ids.filter((id) => id.startsWith(idOrPrefix));
  if (hit.length === 0) return null;
  if (hit.length > 1) throw new AmbiguousPrefixError(idOrPrefix, hit);
  const id = hit[0]!;
  return {
    key: sessionKey("intendant", id),
    source: "intendant",
    session_id: id,
    dir: join(logsDir, id),
  };
}

/**
 * Resolves `"<source>:<id>"` or a native id / unique prefix. InvalidInputError for bad
 * grammar (before any fs access), NotFoundError when unknown, AmbiguousPrefixError when
 * a prefix matches several native sessions. An unprefixed id that names no native
 * session may still name exactly one external session (the CLI prints bare ids).
 */
export async function resolveSessionKey(d: CatalogDeps, idOrKey: string): Promise<ResolvedKey> {
  const { source, id } = parseSessionKey(idOrKey);
  if (source === null || source === "intendant") {
    const native = await resolveNative(d.logsDir, id);
    if (native) return native;
    if (source === "intendant") throw new NotFoundError(`No native session matches "${id}"`);
  }
  const { sessions } = await d.store.readManifest();
  if (source !== null) {
    const key = sessionKey(source, id);
    const e = Object.hasOwn(sessions, key) ? sessions[key] : undefined;
    if (!e) throw new NotFoundError(`No session "${key}"`);
    return { key, source, session_id: e.session_id };
  }
  const matches = Object.entries(sessions).filter(([, e]) =>
    e.source !== "intendant" && e.session_id === id
  );
  if (matches.length === 1) {
    const [key, e] = matches[0]!;
    return { key, source: e.source, session_id: e.session_id };
  }
  if (matches.length > 1) throw new AmbiguousPrefixError(id, matches.map(([k]) => k));
  throw new NotFoundError(`No session matches "${id}"`);
}
