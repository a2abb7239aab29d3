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
 * long key-like token touching a cut edge is masked as a fragment too (cutEdgeTokens);
 * titles, which producers cut at 100–120 code points, get the same check at their end.
 * Pure; never throws.
 */
import { maskedForm, maskSecrets, maskWithRanges } from "../../lib/secrets/mod.ts";
// Imported from the query's types module directly (as sources.ts does the source table):
// its only imports are type-only, so the server's engine stays out of the bundle.
import { SNIPPET_MAX_BYTES } from "../../lib/message_search/query/types.ts";
import type { SessionSummary } from "../api_client.ts";
import { foldText } from "./fold.ts";
import { type IndexRange, snippetRanges, utf8Length } from "./highlight.ts";
import { sessionTitle } from "./markdown.ts";

/** The kind named for a key-like fragment at a snippet's cut edge. */
export const CUT_FRAGMENT_KIND = "possible secret, cut";

/**
 * A token at a cut edge is treated as a fragment of a secret from this length on (when
 * keyish): a third of the shortest provider format's characters already says too much.
 */
const FRAGMENT_MIN_CHARS = 12;
const KEYISH = /^[A-Za-z0-9_\-+/=.~]+$/;

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

/**
 * Key-like: long enough, a key alphabet, and random-looking — at least one digit and one
 * capital, as every provider body of that length shows (base62/base64 keys: GitHub,
 * OpenAI, Anthropic, Stripe, Slack, GCP, JWTs, AWS secrets; AWS key ids are capitals and
 * digits). Hex hashes and UUIDs (no capitals), words and digit-free paths are not.
 */
function keyish(token: string): boolean {
  if (token.length < FRAGMENT_MIN_CHARS || !KEYISH.test(token) || !/\d/.test(token)) return false;
  return /[A-Z]/.test(token);
}

/** One replacement made at a cut edge, in UTF-8 bytes of the text before it. */
interface Edit {
  start: number;
  end: number;
  length: number;
}

const EDGE_TOKEN_HEAD = /^[^\s"'`<>()[\]{},;]+/;
const EDGE_TOKEN_TAIL = /[^\s"'`<>()[\]{},;]+$/;

/**
 * Masks a key-like token touching a cut edge of a snippet (`head`: the snippet starts
 * inside the record; `tail`: it may stop before the record's end), and moves byte
 * `ranges` the way maskWithRanges does: one touching a fragment covers its masked form,
 * the ones after it shift.
 */
export function cutEdgeTokens(
  text: string,
  ranges: readonly [number, number][],
  { head, tail }: { head: boolean; tail: boolean },
): { text: string; ranges: [number, number][] } {
  const h = head ? EDGE_TOKEN_HEAD.exec(text) : null;
  const t = tail ? EDGE_TOKEN_TAIL.exec(text) : null;
  const headTok = h && keyish(h[0]) ? h[0] : null;
  // One token spanning the whole snippet is masked once (as the tail).
  const tailTok = t && keyish(t[0]) && !(headTok && t.index === 0) ? t[0] : null;
  if (!headTok && !tailTok) return { text, ranges: [...ranges] };
  const edits: Edit[] = [];
  let out = text;
  if (tailTok) {
    const masked = maskedForm(tailTok, CUT_FRAGMENT_KIND);
    const at = text.length - tailTok.length;
    edits.push({
      start: utf8Length(text.slice(0, at)),
      end: utf8Length(text),
      length: utf8Length(masked),
    });
    out = out.slice(0, at) + masked;
  }
  if (headTok) {
    const masked = maskedForm(headTok, CUT_FRAGMENT_KIND);
    edits.unshift({ start: 0, end: utf8Length(headTok), length: utf8Length(masked) });
    out = masked + out.slice(headTok.length);
  }
  return { text: out, ranges: moveRanges(ranges, edits) };
}

/** Maps a byte offset through `edits` (sorted, disjoint); `end`: it closes a range. */
function moveOffset(x: number, edits: readonly Edit[], end: boolean): number {
  let shift = 0;
  for (const e of edits) {
    if (end ? x <= e.start : x < e.start) break;
    // Inside (or, for an end, touching) a fragment: cover the whole masked form.
    if (end ? x <= e.end : x < e.end) return e.start + shift + (end ? e.length : 0);
    shift += e.length - (e.end - e.start);
  }
  return x + shift;
}

function moveRanges(ranges: readonly [number, number][], edits: readonly Edit[]) {
  return ranges.map(([s, e]): [number, number] => [
    moveOffset(s, edits, false),
    moveOffset(e, edits, true),
  ]);
}

/** What a hit's snippet shows: its text and its highlights as string indices. */
export interface ShownSnippet {
  text: string;
  ranges: IndexRange[];
}

/** A search hit's snippet as shown, masked when `on` (see the module header). */
export function shownSnippet(
  hit: { snippet: string; snippet_offset_bytes: number; ranges: readonly [number, number][] },
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
  // A full window (SNIPPET_MAX_BYTES, less up to 3 bytes of a split character) may have
  // been cut before the record's end.
  const edges = cutEdgeTokens(masked.text, masked.ranges, {
    head: off > 0,
    tail: total >= SNIPPET_MAX_BYTES - 3,
  });
  return { text: edges.text, ranges: snippetRanges(edges.text, 0, edges.ranges) };
}

/**
 * Titles are cut by their producers at 100–120 code points (some add "…"): from this
 * length on a title may end inside a key, so its last token gets the cut-edge check.
 */
const TITLE_CUT_CHARS = 99;

/** A title string as shown: masked when `on`, including a key cut by the title's cap. */
export function shownTitleText(title: string, on: boolean): string {
  if (!on) return title;
  const masked = maskSecrets(title).text;
  if ([...title].length < TITLE_CUT_CHARS) return masked;
  const ellipsis = masked.endsWith("…") ? "…" : "";
  const body = ellipsis ? masked.slice(0, -1) : masked;
  return cutEdgeTokens(body, [], { head: false, tail: true }).text + ellipsis;
}

/** A session's title as shown (the name when renamed), masked when `on`. */
export function shownTitle(
  s: Pick<SessionSummary, "name" | "title" | "session_id">,
  on: boolean,
): string {
  return shownTitleText(sessionTitle(s), on);
}
