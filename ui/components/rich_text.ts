/**
 * A message's text rendered as safe Markdown (ui/lib/md_render.ts: a parsed tree turned
 * into elements, never HTML), with the query's words marked inside the rendered text
 * (the same folded matching as search, per text leaf: a word split by formatting, like
 * `**ze**bra`, is not marked). The parse is memoized per text, so live updates and hit
 * navigation re-render rows without re-parsing them.
 * With masking on, the ORIGINAL text is parsed and each text leaf (code too) is masked
 * as it renders, so a masked form can never change the formatting (`npm_…` after an
 * opening `_` would otherwise close an emphasis; `…[kind](` would start a link). Every
 * secret the whole text holds must then have been masked inside one leaf; if one was
 * split across leaves by formatting, the masked SOURCE is parsed instead — its formatting
 * may differ, a secret never shows. A link whose href holds a secret (a bare
 * `https://user:token@host` URL: its text leaf is masked, its href is not) loses its href
 * while masked: it shows as text, not a link that would put the secret in the status bar.
 */
import { html } from "htm/preact";
import type { ComponentChildren, VNode } from "preact";
import { useMemo } from "preact/hooks";
import { findSecrets } from "../../lib/secrets/mod.ts";
import { findTerms } from "../lib/fold.ts";
import { splitMarked } from "../lib/highlight.ts";
import { shownMessage } from "../lib/masking.ts";
import { type MarkFn, renderMarkdown } from "../lib/md_render.ts";

/** A text leaf with every occurrence of `terms` in <mark>. */
export function markTerms(terms: readonly string[]): MarkFn | undefined {
  if (!terms.length) return undefined;
  return (text) => markLeaf(text, terms);
}

function markLeaf(text: string, terms: readonly string[]): ComponentChildren {
  const ranges = findTerms(text, terms);
  if (!ranges.length) return text;
  return splitMarked(text, ranges).map((p) => (p.marked ? html`<mark>${p.text}</mark>` : p.text));
}

/** Drops the href of every `<a>` in `c` (fresh vnodes, not yet rendered) holding a secret. */
function unlinkSecrets(c: ComponentChildren, secrets: readonly string[]): void {
  if (Array.isArray(c)) return c.forEach((x) => unlinkSecrets(x, secrets));
  if (!c || typeof c !== "object") return;
  const props = (c as VNode<{ href?: unknown; children?: ComponentChildren }>).props;
  if (!props) return;
  const href = props.href;
  if (typeof href === "string" && secrets.some((s) => href.includes(s))) delete props.href;
  unlinkSecrets(props.children, secrets);
}

/** `text` rendered with every secret masked and `terms` marked (see the module header). */
export function renderMasked(text: string, terms: readonly string[]): ComponentChildren {
  const wanted = findSecrets(text).map((s) => text.slice(s.start, s.end));
  if (!wanted.length) return renderMarkdown(text, markTerms(terms));
  const masked = new Set<string>();
  const out = renderMarkdown(text, (leaf) => {
    const shown = shownMessage(leaf, true, terms);
    if (shown.hidden) { for (const s of findSecrets(leaf)) masked.add(leaf.slice(s.start, s.end)); }
    return markLeaf(shown.text, shown.terms);
  });
  if (wanted.every((s) => masked.has(s))) {
    unlinkSecrets(out, wanted);
    return out;
  }
  const whole = shownMessage(text, true, terms);
  return renderMarkdown(whole.text, markTerms(whole.terms));
}

/** Props of {@link RichText}. */
export interface RichTextProps {
  /** The original text. */
  text: string;
  /** Words to mark (empty: none). */
  terms: readonly string[];
  /** Mask secrets ("Mask secrets" switch). @default false */
  mask?: boolean;
}

/** The rendered Markdown of `text`. */
export function RichText({ text, terms, mask = false }: RichTextProps) {
  const key = terms.join("\u0000");
  return useMemo(
    () => mask ? renderMasked(text, terms) : renderMarkdown(text, markTerms(terms)),
    [text, key, mask],
  );
}
