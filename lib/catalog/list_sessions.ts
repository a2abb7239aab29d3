/**
 * The catalog listing: native sessions (discovered under logsDir) plus external ones
 * (the index manifest's entries), names overlaid (native names from meta, external ones
 * from session_names.json through applyNameOverlays), newest first by updated_ms (ties
 * by key), paged. `q` is the dashboard's session filter and `intendant sessions QUERY`:
 * every whitespace-separated word must occur (folded, case- and accent-insensitive
 * substring) in the session's name, title, project, id or source — over the WHOLE catalog,
 * so the filter never reports "0 matches" for a session that is simply not loaded yet. Counts and parents that need the spine are
 * computed only for the page. Native manifest entries whose directory is gone are not
 * listed (the session was deleted); external entries keep serving with source_gone.
 */
import { InvalidInputError } from "../errors.ts";
import {
  fold,
  type ManifestEntry,
  sessionKey,
  type Source,
  SOURCES,
} from "../message_search/mod.ts";
import { applyNameOverlays, normalizeName, readNameOverlays } from "../session_log/mod.ts";
import { discoverNative, mapPool, type NativeFacts, scanSpine } from "./native_facts.ts";
import { resumeCommand } from "./resume.ts";
import {
  type CatalogDeps,
  LIST_DEFAULT_LIMIT,
  LIST_MAX_LIMIT,
  type SessionSummary,
} from "./types.ts";

/** Options for {@link listSessions}. */
export interface ListOptions {
  /** @default LIST_DEFAULT_LIMIT */
  limit?: number;
  /** @default 0 */
  offset?: number;
  /** Only these sources. @default all */
  source?: Source[];
  /** Words that must all occur (folded) in name/title/project/id/source. */
  q?: string;
}

/** A listing page. */
export interface SessionList {
  sessions: SessionSummary[];
  total: number;
  next_offset: number | null;
}

const TITLE_MAX_CHARS = 120;

function checkOptions(o: ListOptions): { limit: number; offset: number; sources: Set<Source> } {
  const { limit = LIST_DEFAULT_LIMIT, offset = 0 } = o;
  if (!Number.isInteger(limit) || limit < 1 || limit > LIST_MAX_LIMIT) {
    throw new RangeError(`Invalid limit "${limit}": expected 1-${LIST_MAX_LIMIT}`);
  }
  if (!Number.isInteger(offset) || offset < 0) {
    throw new RangeError(`Invalid offset "${offset}": expected a non-negative integer`);
  }
  for (const s of o.source ?? []) {
    if (!(SOURCES as readonly string[]).includes(s)) {
      throw new InvalidInputError(`Unknown source "${String(s).slice(0, 40)}"`);
    }
  }
  return { limit, offset, sources: new Set(o.source?.length ? o.source : SOURCES) };
}

/** `task` as one line, cut to TITLE_MAX_CHARS characters (an ellipsis marks the cut). */
export function titleOf(task: string | null | undefined): string | null {
  const flat = normalizeName(task ?? null);
  if (flat === null) return null;
  const chars = Array.from(flat);
  return chars.length <= TITLE_MAX_CHARS
    ? flat
    : `${chars.slice(0, TITLE_MAX_CHARS - 1).join("")}…`;
}

/** The summary of a native session (counts filled later, for the page only). */
export function nativeSummary(f: NativeFacts): SessionSummary {
  return {
    key: sessionKey("intendant", f.id),
    source: "intendant",
    session_id: f.id,
    name: normalizeName(f.meta?.name ?? null),
    title: titleOf(f.meta?.task),
    project: f.meta?.project_root ?? null,
    status: f.meta?.status ?? null,
    created_ms: f.meta?.created_at_ms ?? null,
    updated_ms: f.updatedMs,
    message_count: 0,
    source_gone: false,
    parent_session_id: null,
    resume_command: resumeCommand({
      source: "intendant",
      sessionId: f.id,
      project: null,
      files: [],
    }),
  };
}

/** The summary of an external session, from its manifest entry alone. */
export function externalSummary(key: string, e: ManifestEntry): SessionSummary {
  // A quarantined shard (damaged, being re-derived) holds no records but keeps its ts
  // range: it stays where it was in the listing.
  const dated = e.records > 0 || e.quarantined_at_ms !== undefined;
  return {
    key,
    source: e.source,
    session_id: e.session_id,
    name: null,
    title: e.meta.title,
    project: e.meta.project,
    status: null,
    created_ms: dated ? e.oldest_ts_ms : null,
    updated_ms: dated ? e.newest_ts_ms : null,
    message_count: e.records,
    source_gone: e.source_gone,
    parent_session_id: e.meta.parent_session_id,
    resume_command: resumeCommand({
      source: e.source,
      sessionId: e.session_id,
      project: e.meta.project,
      files: e.meta.files,
    }),
  };
}

/** The folded text the filter matches a session against. */
function haystackOf(s: SessionSummary): string {
  return fold([s.name, s.title, s.project, s.session_id, s.source].filter(Boolean).join("\n"));
}

/** The folded terms of a filter: words, or `"quoted phrases"` as one term (as search reads them). */
export function filterTerms(q: string): string[] {
  const out: string[] = [];
  for (const m of q.matchAll(/"([^"]*)"?|([^\s"]+)/g)) {
    const t = (m[1] ?? m[2] ?? "").trim();
    if (t) out.push(fold(t));
  }
  return out;
}

function matches(s: SessionSummary, terms: readonly string[]): boolean {
  const hay = haystackOf(s);
  return terms.every((t) => hay.includes(t));
}

/** Lists native and external sessions, newest first, paged. */
export async function listSessions(d: CatalogDeps, o: ListOptions = {}): Promise<SessionList> {
  const { limit, offset, sources } = checkOptions(o);
  const terms = filterTerms(o.q ?? "");
  const manifest = await d.store.readManifest();
  const natives = sources.has("intendant") ? await discoverNative(d.logsDir) : [];
  const all: SessionSummary[] = natives.map(nativeSummary);
  for (const [key, e] of Object.entries(manifest.sessions)) {
    if (e.source !== "intendant" && sources.has(e.source)) all.push(externalSummary(key, e));
  }
  const named = applyNameOverlays(all, await readNameOverlays(d.namesPath));
  const kept = terms.length === 0 ? named : named.filter((s) => matches(s, terms));
  kept.sort((a, b) =>
    (b.updated_ms ?? -Infinity) - (a.updated_ms ?? -Infinity) ||
    (a.key < b.key ? -1 : a.key > b.key ? 1 : 0)
  );
  const page = kept.slice(offset, offset + limit);
  const byId = new Map(natives.map((f) => [f.id, f]));
  const sessions = await mapPool(page, async (s) => {
    if (s.source !== "intendant") return s;
    const entry = manifest.sessions[s.key];
    if (entry) {
      return {
        ...s,
        message_count: entry.records,
        parent_session_id: entry.meta.parent_session_id,
      };
    }
    const facts = await scanSpine(byId.get(s.session_id)!.dir, s.session_id);
    return { ...s, message_count: facts.messages, parent_session_id: facts.parent };
  });
  const end = offset + page.length;
  return { sessions, total: kept.length, next_offset: end < kept.length ? end : null };
}
