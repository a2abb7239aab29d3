/**
 * Secret masking for what the dashboard shows: thin, pure wrappers over the one masker
 * (lib/secrets/mod.ts — the same rules MCP, the export and the report zip use). `on` is
 * the "Mask secrets" switch (hooks/use_mask_secrets.ts); off returns the text untouched.
 * The index is never masked (a key still finds its message); only display is.
 *
 * Snippets: the search API's highlight ranges are UTF-8 byte offsets into the ORIGINAL
 * record, and the snippet a window of it cut on character boundaries. The ranges are made
 * relative to the snippet (clamped), moved onto the masked text by maskWithRanges (a
 * range touching a secret covers its whole masked form, so a search by the key marks the
 * masked key), then turned into string indices by highlight.ts. A window cut through a
 * secret leaves a fragment the rules may not recognise (too short for its format), so a
 * long key-like token touching a cut edge is masked as a fragment too (lib/secrets
 * maskCutEdges);
 * titles, which producers cut at 100–120 code points, get the same check at their end.
 * Pure; never throws.
 */
import {
  maskCutEdges,
  maskedForm,
  maskSecrets,
  maskTitle,
  maskWithRanges,
} from "../../lib/secrets/mod.ts";
// Imported from the query's types module directly (as sources.ts does the source table):
// its only imports are type-only, so the server's engine stays out of the bundle.
import { SNIPPET_MAX_BYTES } from "../../lib/message_search/query/types.ts";
import type { SessionSummary } from "../api_client.ts";
import { foldText } from "./fold.ts";
import { type IndexRange, snippetRanges, utf8Length } from "./highlight.ts";
import { sessionTitle } from "./markdown.ts";

/** The cut-edge check lives with the masker (lib/secrets cut_edges.ts): one rule everywhere. */
export { CUT_FRAGMENT_KIND, maskCutEdges as cutEdgeTokens } from "../../lib/secrets/mod.ts";

/** `text` as shown: masked when `on`. */
export function shownText(text: string, on: boolean): string {
  return on ? maskSecrets(text).text : text;
}

/** A text as shown in the detail: masked, how many secrets were hidden, what to mark. */
export interface ShownMessage {
  text: string;
  hidden: number;
  /**
   * The query's terms plus the masked form of every hidden secret that a term matched:
   * opened from a search by a key, the row marks the masked key (the words themselves
   * are no longer in the text to be found).
   */
  terms: readonly string[];
}

/** `text` as the detail shows it, for the query's `terms` (see ShownMessage). */
export function shownMessage(text: string, on: boolean, terms: readonly string[]): ShownMessage {
  if (!on) return { text, hidden: 0, terms };
  const m = maskSecrets(text);
  if (!m.spans.length) return { text, hidden: 0, terms };
  const folded = terms.map(foldText);
  const extra = new Set<string>();
  for (const sp of m.spans) {
    const secret = text.slice(sp.start, sp.end);
    const f = foldText(secret);
    if (folded.some((t) => t && (f.includes(t) || t.includes(f)))) {
      extra.add(maskedForm(secret, sp.kind));
    }
  }
  return { text: m.text, hidden: m.spans.length, terms: [...terms, ...extra] };
}

/** What a hit's snippet shows: its text and its highlights as string indices. */
export interface ShownSnippet {
  text: string;
  ranges: IndexRange[];
}

/** A search hit's snippet as shown, masked when `on` (see the module header). */
export function shownSnippet(
  hit: {
    snippet: string;
    snippet_offset_bytes: number;
    ranges: readonly [number, number][];
    snippet_cut_end?: boolean;
  },
  on: boolean,
): ShownSnippet {
  const { snippet, snippet_offset_bytes: off } = hit;
  if (!on) return { text: snippet, ranges: snippetRanges(snippet, off, hit.ranges) };
  const total = utf8Length(snippet);
  const rel: [number, number][] = [];
  for (const [a, b] of hit.ranges) {
    const s = Math.max(0, Math.min(total, a - off));
    const e = Math.max(0, Math.min(total, b - off));
    if (e > s) rel.push([s, e]);
  }
  const masked = maskWithRanges(snippet, rel);
  // The server says whether the window stops before the record's end; an older one does
  // not, and then a full window (SNIPPET_MAX_BYTES, less up to 3 bytes of a split
  // character) may have been cut there.
  const edges = maskCutEdges(masked.text, masked.ranges, {
    head: off > 0,
    tail: hit.snippet_cut_end ?? total >= SNIPPET_MAX_BYTES - 3,
  });
  return { text: edges.text, ranges: snippetRanges(edges.text, 0, edges.ranges) };
}

/** A title string as shown: masked when `on`, including a key cut by the title's cap. */
export function shownTitleText(title: string, on: boolean): string {
  return on ? maskTitle(title) : title;
}

/** A session's title as shown (the name when renamed), masked when `on`. */
export function shownTitle(
  s: Pick<SessionSummary, "name" | "title" | "session_id">,
  on: boolean,
): string {
  return shownTitleText(sessionTitle(s), on);
}
