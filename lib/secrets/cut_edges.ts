/**
 * Masking text that was CUT before it reached us: a search snippet (a window of its
 * message), a title (its producer cut the first prompt at 100–120 code points). A cut
 * through a key leaves a fragment the rules may not recognise (too short for its format),
 * and 30 characters of a key say too much (H2). So after the one masker ran, a long
 * key-like token touching a cut edge is masked as a fragment too; highlight byte ranges
 * move the way maskWithRanges moves them (a range touching a fragment covers its masked
 * form, the ones after it shift). Every surface that shows cut text uses these: the
 * dashboard, the MCP server, `intendant secrets`, `search --team`.
 * Pure (the UI bundle imports it); never throws.
 */
import { utf8Length } from "../text/mod.ts";
import { maskedForm, maskSecrets } from "./find.ts";

/** The kind named for a key-like fragment at a cut edge. */
export const CUT_FRAGMENT_KIND = "possible secret, cut";

/**
 * A token at a cut edge is treated as a fragment of a secret from this length on (when
 * keyish): a third of the shortest provider format's characters already says too much.
 */
const FRAGMENT_MIN_CHARS = 12;
const KEYISH = /^[A-Za-z0-9_\-+/=.~]+$/;

/**
 * Key-like: long enough, a key alphabet, and random-looking — at least one digit and one
 * capital, as every provider body of that length shows (base62/base64 keys: GitHub,
 * OpenAI, Anthropic, Stripe, Slack, GCP, JWTs, AWS secrets; AWS key ids are capitals and
 * digits). Hex hashes and UUIDs (no capitals), words and digit-free paths are not.
 */
function keyish(token: string): boolean {
  if (!KEYISH.test(token)) return false;
  // The start of a provider key (a title cut 12 characters into `sk-proj-…`): its prefix
  // says what it is, however few random characters follow.
  if (PROVIDER_PREFIX.test(token) && token.length >= PREFIXED_FRAGMENT_MIN_CHARS) return true;
  if (token.length < FRAGMENT_MIN_CHARS || !/\d/.test(token)) return false;
  return /[A-Z]/.test(token);
}

/** The prefixes of the provider formats the rules know (rules.ts). */
const PROVIDER_PREFIX =
  /^(?:sk-|gh[pousr]_|github_pat_|glpat-|AKIA|ASIA|ABIA|ACCA|A3T|xox[abprse]-|[rs]k_(?:live|test|prod)_|AIza|GOCSPX-|npm_|hf_|SG\.|eyJ)/;
/** A prefixed fragment is masked from this length on (prefix plus a few characters). */
const PREFIXED_FRAGMENT_MIN_CHARS = 8;

/** One replacement made at a cut edge, in UTF-8 bytes of the text before it. */
interface Edit {
  start: number;
  end: number;
  length: number;
}

const EDGE_TOKEN_HEAD = /^[^\s"'`<>()[\]{},;]+/;
const EDGE_TOKEN_TAIL = /[^\s"'`<>()[\]{},;]+$/;

/**
 * `text` (already masked) with a key-like token at a cut edge masked as a fragment
 * (`head`: the text starts inside its source; `tail`: it may stop before the source's
 * end), and its byte `ranges` moved accordingly.
 */
export function maskCutEdges(
  text: string,
  ranges: readonly [number, number][],
  { head, tail }: { head: boolean; tail: boolean },
): { text: string; ranges: [number, number][] } {
  const h = head ? EDGE_TOKEN_HEAD.exec(text) : null;
  const t = tail ? EDGE_TOKEN_TAIL.exec(text) : null;
  const headTok = h && keyish(h[0]) ? h[0] : null;
  // One token spanning the whole text is masked once (as the tail).
  const tailTok = t && keyish(t[0]) && !(headTok && t.index === 0) ? t[0] : null;
  if (!headTok && !tailTok) return { text, ranges: ranges.map(([s, e]) => [s, e]) };
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

/**
 * Titles are cut by their producers at 100–120 code points (some add "…"): from this
 * length on a title may end inside a key, so its last token gets the cut-edge check.
 */
const TITLE_CUT_CHARS = 99;

/** A title (or any field a producer may have cut at its end) masked, a cut key included. */
export function maskTitle(title: string): string {
  const masked = maskSecrets(title).text;
  if ([...title].length < TITLE_CUT_CHARS && !title.endsWith("…")) return masked;
  const ellipsis = masked.endsWith("…") ? "…" : "";
  const body = ellipsis ? masked.slice(0, -1) : masked;
  return maskCutEdges(body, [], { head: false, tail: true }).text + ellipsis;
}
