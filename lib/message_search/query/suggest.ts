/**
 * What would find something when a search finds nothing (issue 25: an empty page used to
 * suggest "Include rewound messages" even when that found nothing too). Each widening of
 * the request — rewound messages included, the source filter dropped, the role filter
 * dropped — is suggested only after running it: a suggestion carries the sessions it
 * found (the exact total when the engine counted it, else "at least" the first page's).
 * Only an empty `ready` first page is widened: a partial page has not searched
 * everything, and a later page was not empty from the start. The widened searches run
 * one after another through the engine's own page function (never recursively widened),
 * with the caller's budgets, so a suggestion costs at most three more scans of a query
 * that matched nothing — the cheapest kind (summaries rule most sessions out unread).
 * Shared by the local engine and the team engine: both answer the same contract.
 */
import type {
  SearchRequest,
  SearchResponse,
  SearchSuggestion,
  SearchSuggestions,
} from "./types.ts";

/** One widening: its name in `suggestions` and the request it runs, or null when moot. */
type Widening = [keyof SearchSuggestions, (r: SearchRequest) => SearchRequest | null];

const WIDENINGS: readonly Widening[] = [
  ["include_superseded", (r) => r.include_superseded ? null : { ...r, include_superseded: true }],
  ["all_sources", (r) => r.source?.length ? { ...r, source: undefined } : null],
  ["all_roles", (r) => r.role?.length ? { ...r, role: undefined } : null],
];

/** What `res` found, as a suggestion; null when it found nothing. */
function suggestionOf(res: SearchResponse): SearchSuggestion | null {
  if (res.groups.length === 0) return null;
  return res.total_sessions === undefined
    ? { sessions: res.groups.length, more: true }
    : { sessions: res.total_sessions, more: false };
}

/**
 * The widenings of `req` that find something, or undefined when `res` is not an empty
 * ready first page or none does. `page` answers one request without widening it.
 */
export async function suggestWidenings<R extends SearchRequest>(
  req: R,
  res: SearchResponse,
  page: (r: R) => Promise<SearchResponse>,
): Promise<SearchSuggestions | undefined> {
  if (res.state !== "ready" || res.groups.length > 0 || req.cursor) return undefined;
  const out: SearchSuggestions = {};
  for (const [name, widen] of WIDENINGS) {
    const wide = widen(req);
    if (wide === null) continue;
    const found = suggestionOf(await page(wide as R));
    if (found) out[name] = found;
  }
  return Object.keys(out).length > 0 ? out : undefined;
}
