/**
 * A relevance page (issue 27): the ranked sessions of relevance_scan.ts from a rank
 * offset, rendered like a newest page (render.ts renderGroup: the shown hits highlighted,
 * every matched form of every term marked) plus each group's `relevance`, under the same
 * response budget. The continuation is a rank: a relevance cursor's position is
 * `{ best: <rank of the next group>, key: RANK_KEY }` in the seed's cursor format, pinned
 * to the manifest revision like every cursor (the ranking is recomputed per page, and is
 * a total order over that revision, so pages never repeat or skip a session).
 * States: timeout → partial, no cursor (an unknown subset was ranked); a damaged or
 * quarantined session in scope → partial/degraded with the cursor a ready page carries;
 * a cut by the response budget → partial/budget, cursor after the last group that fit.
 */
import { bareRegex, type Question } from "./question.ts";
import type { RelevanceOutcome } from "./relevance_scan.ts";
import { degradedOf, fitGroups, renderGroup } from "./render.ts";
import type { CursorPosition } from "./search_cursor.ts";
import type { SearchResponse } from "./types.ts";

/** The key of a relevance cursor's position (its `best` is a rank). */
export const RANK_KEY = "#rank";

/** Every form a hit's text may hold a term in: exact, suffix-folded, unaccented. */
export function highlightNeedles(q: Question): string[] {
  const out = new Set<string>();
  for (const t of q.terms) {
    out.add(t.text);
    if (t.stem) out.add(t.stem);
    if (t.bare) out.add(t.bare);
  }
  return [...out];
}

/** The page from rank `offset`; `next` is the rank to resume at, undefined when done. */
export function renderRelevancePage(
  scan: RelevanceOutcome,
  o: { question: Question; offset: number; limit: number; budgetBytes: number },
): Pick<SearchResponse, "state" | "partial_reason" | "groups" | "degraded"> & {
  next: CursorPosition | undefined;
} {
  const needles = highlightNeedles(o.question);
  const loose = o.question.terms.filter((t) => !t.phrase).map((t) => bareRegex(t.bare ?? t.text));
  const degraded = degradedOf(scan.degraded);
  const { groups, cut } = fitGroups(
    scan.ranked.slice(o.offset, o.offset + o.limit),
    (r) => ({
      ...renderGroup(
        {
          session: r.session,
          match: { best: r.best, total: r.total, hits: r.hits },
          pos: { best: r.best, key: r.session.key },
        },
        needles,
        loose,
      ),
      relevance: r.relevance,
    }),
    // 512 bytes more of envelope than a newest page: query_terms (the words kept and dropped).
    { budgetBytes: o.budgetBytes - 512, degraded },
  );
  const at = o.offset + groups.length;
  const next = at < scan.ranked.length ? { best: at, key: RANK_KEY } : undefined;
  const withDegraded = <T extends object>(p: T) => (degraded ? { ...p, degraded } : p);
  if (scan.stop === "timeout") {
    return withDegraded({ state: "partial", partial_reason: "timeout", groups, next: undefined });
  }
  if (cut) return withDegraded({ state: "partial", partial_reason: "budget", groups, next });
  if (degraded) return { state: "partial", partial_reason: "degraded", degraded, groups, next };
  return { state: "ready", groups, next };
}
