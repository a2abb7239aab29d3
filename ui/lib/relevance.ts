/**
 * What a relevance page (issue 27, "Best match") says about how a session matched, in
 * words. Exact groups (one message holds every content word) say nothing; related groups
 * — shown only after the exact ones — always carry a label, so a session that holds only
 * some of the words, or all of them spread over several messages, or only without
 * accents / with another word ending, is never taken for an exact hit. The label names
 * the strongest shortfall: missing words first, then a loose spelling, then words spread
 * over messages. A loose group never claims "across messages": the engine counts a
 * message that holds every word only loosely as not holding them all, so `spread` may be
 * set for one message, and the label must never say what is not so. A hit of a relevance
 * page opens the detail with the words the engine kept (detailQuery), not the question:
 * the detail steps through messages holding every word of its `q`, and "where", "is",
 * "the" would leave it none. Pure.
 */
import type { GroupRelevance, QueryTerms } from "../api_client.ts";

/** The line a relevance page shows when the question held only common words. */
export const ONLY_COMMON_TEXT =
  "Only common words — add a word that names the thing you're looking for";

/** The divider before a relevance page's first related group. */
export const RELATED_DIVIDER_TEXT = "Related — no single message holds every word as typed";

/** "related · 2 of 3 words" for a related group; null for an exact one (or none). */
export function relatedLabel(r: GroupRelevance | undefined): string | null {
  if (!r || r.tier !== "related") return null;
  const parts = ["related"];
  if (r.terms_matched < r.terms_total) {
    parts.push(`${r.terms_matched} of ${r.terms_total} word${r.terms_total === 1 ? "" : "s"}`);
  } else if (r.spread && !r.loose) parts.push("all words, across messages");
  if (r.loose) parts.push("without accents");
  return parts.join(" · ");
}

/** The related badge's tooltip: the same facts as a sentence. */
export function relatedTip(r: GroupRelevance): string {
  const found = r.terms_matched < r.terms_total
    ? `Holds ${r.terms_matched} of the ${r.terms_total} searched words`
    : r.spread && !r.loose
    ? "Holds every searched word, but no one message holds them all"
    : "Holds every searched word";
  const loose = r.loose ? "; some only without accents or with another ending" : "";
  return `Not an exact match. ${found}${loose}`;
}

/**
 * The `q` a hit link hands the detail: on a relevance page the kept words (a phrase
 * quoted again), so the detail highlights and counts what was searched; otherwise `q`.
 */
export function detailQuery(q: string, terms: QueryTerms | null): string {
  if (!terms || !terms.kept.length) return q;
  return terms.kept.map((t) => /\s/.test(t) ? `"${t.replaceAll('"', "")}"` : t).join(" ");
}
