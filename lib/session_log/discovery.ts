/**
 * Finding sessions under `<state-root>/logs/`: newest-first listing, lookup by full id or
 * unique prefix (ambiguity is an error naming the candidates), and the most recent
 * top-level session of a project for --continue (sub-agent roles are skipped). Ids and
 * prefixes are checked against a strict grammar before any path is built from them.
 * Directories with an unreadable meta are reported, never fatal.
 */
import { join } from "node:path";
import { AmbiguousPrefixError, InvalidInputError, NotFoundError } from "../errors.ts";
import { readMeta, type SessionMeta } from "./meta.ts";

/** Session ids and prefixes we accept: UUID characters only, bounded. */
export const SESSION_ID_GRAMMAR = /^[A-Za-z0-9][A-Za-z0-9_-]{0,127}$/;

/** A discovered session. */
export interface FoundSession {
  dir: string;
  meta: SessionMeta;
}

/** Listing result. */
export interface SessionListing {
  sessions: FoundSession[];
  invalid: { dir: string; reason: string }[];
}

/** Lists sessions newest first (created_at_ms, then id for a stable order). */
export async function listSessions(logsDir: string): Promise<SessionListing> {
  const sessions: FoundSession[] = [];
  const invalid: { dir: string; reason: string }[] = [];
  let entries: Deno.DirEntry[];
  try {
    entries = [];
    for await (const e of Deno.readDir(logsDir)) entries.push(e);
  } catch (err) {
    if (err instanceof Deno.errors.NotFound) return { sessions, invalid };
    throw err;
  }
  for (const e of entries) {
    // Symlinked entries are not ours to follow.
    if (!e.isDirectory || !SESSION_ID_GRAMMAR.test(e.name)) continue;
    const dir = join(logsDir, e.name);
    const read = await readMeta(dir);
    if (read.ok) sessions.push({ dir, meta: read.meta });
    else invalid.push({ dir, reason: read.reason });
  }
  sessions.sort((a, b) =>
    b.meta.created_at_ms - a.meta.created_at_ms ||
    a.meta.session_id.localeCompare(b.meta.session_id)
  );
  return { sessions, invalid };
}

/** Checks an id or prefix against the grammar. */
export function assertSessionIdGrammar(idOrPrefix: string): void {
  if (!SESSION_ID_GRAMMAR.test(idOrPrefix)) {
    throw new InvalidInputError(
      `Invalid session id "${idOrPrefix.slice(0, 80)}": expected letters, digits, "-" or "_"`,
    );
  }
}

/** Finds a session by full id or unique prefix. */
export async function findSession(logsDir: string, idOrPrefix: string): Promise<FoundSession> {
  assertSessionIdGrammar(idOrPrefix);
  const { sessions } = await listSessions(logsDir);
  const exact = sessions.find((s) => s.meta.session_id === idOrPrefix);
  if (exact) return exact;
  const matches = sessions.filter((s) => s.meta.session_id.startsWith(idOrPrefix));
  if (matches.length === 1) return matches[0]!;
  if (matches.length === 0) throw new NotFoundError(`No session matches "${idOrPrefix}"`);
  throw new AmbiguousPrefixError(idOrPrefix, matches.map((s) => s.meta.session_id));
}

/** The newest top-level (role null) session whose project_root is `projectRoot`, or null. */
export async function mostRecentForProject(
  logsDir: string,
  projectRoot: string,
): Promise<FoundSession | null> {
  const { sessions } = await listSessions(logsDir);
  return sessions.find((s) => s.meta.project_root === projectRoot && s.meta.role === null) ?? null;
}
