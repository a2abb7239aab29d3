/**
 * Validates a SearchRequest and reduces it to what the scan needs: folded needles, filter
 * sets, and the canonical identity a cursor pins. Two requests that select the same
 * results in the same pages (same needles in any order, same filter sets in any order,
 * same limit) share an identity, so a cursor survives cosmetic differences ("a  b" vs
 * "b a") but not a changed filter. The identity holds the folded query: it never leaves
 * the process as is (cursors carry a keyed hash of it, search_cursor.ts). Bad fields are
 * RangeError/TypeError (HTTP 400), never quoting q. An empty cursor string is no cursor
 * (a form or URL that sends `cursor=`).
 */
import { type Source, SOURCES } from "../record.ts";
import { fold } from "./fold.ts";
import { parseQuery } from "./parse_query.ts";
import { parseQuestion, type Question } from "./question.ts";
import {
  DEFAULT_LIMIT,
  MAX_LIMIT,
  SEARCH_SORTS,
  type SearchRequest,
  type SearchSort,
} from "./types.ts";

/** Longest project filter accepted (a path). */
export const PROJECT_MAX_CHARS = 4096;

/** Role bits of {@link NormalizedRequest.roleMask} (and of the arena's per-record flags). */
export const ROLE_USER = 1;
export const ROLE_ASSISTANT = 2;

/** A validated request. */
export interface NormalizedRequest {
  /** Folded needles in query order (for highlighting). */
  needles: string[];
  /** The same needles, longest first: the first one drives the scan (likely the rarest). */
  scanNeedles: string[];
  sources: ReadonlySet<Source> | null;
  /** ROLE_USER | ROLE_ASSISTANT bits allowed. */
  roleMask: number;
  /** Folded project substring, or null. */
  project: string | null;
  since: number | null;
  until: number | null;
  includeSuperseded: boolean;
  /** No time or fresh-load budget (SearchRequest.complete); outside the identity. */
  complete: boolean;
  limit: number;
  cursor: string | null;
  /** The page order (SearchRequest.sort). */
  sort: SearchSort;
  /** A relevance request's question (its terms are `needles`); null for newest. */
  question: Question | null;
  /** Canonical JSON of everything above except the cursor (cursors pin its keyed hash). */
  identity: string;
}

function optionalTime(name: string, v: unknown): number | null {
  if (v === undefined || v === null) return null;
  if (typeof v !== "number" || !Number.isFinite(v)) {
    throw new RangeError(`"${name}" must be a finite epoch-ms number: got "${String(v)}"`);
  }
  return v;
}

/** A de-duplicated, sorted list of allowed values; null for absent or empty (= all). */
function listOf<T extends string>(
  v: unknown,
  { name, allowed }: { name: string; allowed: readonly T[] },
): T[] | null {
  if (v === undefined || v === null) return null;
  if (!Array.isArray(v)) throw new TypeError(`"${name}" must be a list`);
  for (const x of v) {
    if (!allowed.includes(x as T)) {
      throw new RangeError(`Unknown ${name} "${String(x)}": expected one of ${allowed.join(", ")}`);
    }
  }
  return v.length === 0 ? null : [...new Set(v as T[])].sort();
}

/** Validates `req`; throws RangeError/TypeError naming the offending field. */
export function normalizeRequest(req: SearchRequest): NormalizedRequest {
  if (!req || typeof req !== "object") throw new TypeError("A search request must be an object");
  const sort = req.sort ?? "newest";
  if (!SEARCH_SORTS.includes(sort)) {
    throw new RangeError(`Unknown sort "${String(sort)}": expected newest or relevance`);
  }
  // A relevance request is a question: its stopwords are dropped (question.ts), so a long
  // question is not refused for having more than NEEDLES_MAX words.
  const question = sort === "relevance" ? parseQuestion(req.q) : null;
  const needles = question ? question.terms.map((t) => t.text) : parseQuery(req.q).needles;
  const limit = req.limit ?? DEFAULT_LIMIT;
  if (!Number.isInteger(limit) || limit < 1 || limit > MAX_LIMIT) {
    throw new RangeError(`"limit" must be an integer 1..${MAX_LIMIT}: got "${String(limit)}"`);
  }
  const sources = listOf(req.source, { name: "source", allowed: SOURCES });
  const roles = listOf(req.role, { name: "role", allowed: ["user", "assistant"] as const });
  if (req.project !== undefined && req.project !== null && typeof req.project !== "string") {
    throw new TypeError(`"project" must be a string`);
  }
  const rawProject = (req.project ?? "").trim();
  if (rawProject.length > PROJECT_MAX_CHARS) {
    throw new RangeError(`"project" is longer than ${PROJECT_MAX_CHARS} characters`);
  }
  const project = rawProject === "" ? null : fold(rawProject);
  const since = optionalTime("since", req.since);
  const until = optionalTime("until", req.until);
  const inc = req.include_superseded ?? false;
  if (typeof inc !== "boolean") throw new TypeError(`"include_superseded" must be a boolean`);
  const complete = req.complete ?? false;
  if (typeof complete !== "boolean") throw new TypeError(`"complete" must be a boolean`);
  const cursor = req.cursor === "" ? null : req.cursor ?? null;
  if (cursor !== null && typeof cursor !== "string") {
    throw new TypeError(`"cursor" must be a string`);
  }
  let roleMask = ROLE_USER | ROLE_ASSISTANT;
  if (roles) {
    roleMask = (roles.includes("user") ? ROLE_USER : 0) |
      (roles.includes("assistant") ? ROLE_ASSISTANT : 0);
  }
  const identity = JSON.stringify([
    1,
    [...needles].sort(),
    sources,
    roles,
    project,
    since,
    until,
    inc,
    limit,
    // Newest identities are the seed's (its cursors keep verifying); a relevance one differs.
    ...(question
      ? ["relevance", question.terms.map((t) => `${t.phrase ? "p" : "w"}:${t.text}`).sort()]
      : []),
  ]);
  return {
    needles,
    scanNeedles: [...needles].sort((a, b) => b.length - a.length),
    sources: sources ? new Set(sources) : null,
    roleMask,
    project,
    since,
    until,
    includeSuperseded: inc,
    complete,
    limit,
    cursor,
    sort,
    question,
    identity,
  };
}
