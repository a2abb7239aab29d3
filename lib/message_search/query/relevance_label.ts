/**
 * How a relevance group is labelled on every text surface (CLI, MCP): one short phrase
 * for a related group, so neither a person nor an agent mistakes it for an exact hit;
 * nothing for an exact one. And the one line a question of only common words gets.
 * Pure; the dashboard draws its own badge from the same fields.
 */
import type { GroupRelevance, QueryTerms } from "./types.ts";

/** "related: 2 of 3 words" …; null for an exact group (or a newest page's group). */
export function relevanceLabel(r: GroupRelevance | undefined): string | null {
  if (!r || r.tier === "exact") return null;
  const parts = [
    r.spread
      ? `all ${r.terms_total} words, across messages`
      : r.terms_total === 1
      ? "the word"
      : `${r.terms_matched} of ${r.terms_total} words`,
  ];
  if (r.loose) parts.push("some loosely (accents or suffix)");
  return `related: ${parts.join("; ")}`;
}

/** The line for a question of only common words (null when something was searched). */
export function onlyCommonLine(t: QueryTerms | undefined): string | null {
  if (!t?.only_common) return null;
  const words = t.dropped.slice(0, 8).join(", ");
  return `only common words (${words}): nothing was searched — add a word that names what ` +
    "you are looking for (a tool, an error, a file, a project)";
}
