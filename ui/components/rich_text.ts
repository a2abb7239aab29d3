/**
 * A message's text rendered as safe Markdown (ui/lib/md_render.ts: a parsed tree turned
 * into elements, never HTML), with the query's words marked inside the rendered text
 * (the same folded matching as search, per text leaf: a word split by formatting, like
 * `**ze**bra`, is not marked). The parse is memoized per text, so live updates and hit
 * navigation re-render rows without re-parsing them.
 */
import { html } from "htm/preact";
import { useMemo } from "preact/hooks";
import { findTerms } from "../lib/fold.ts";
import { splitMarked } from "../lib/highlight.ts";
import { type MarkFn, renderMarkdown } from "../lib/md_render.ts";

/** A text leaf with every occurrence of `terms` in <mark>. */
export function markTerms(terms: readonly string[]): MarkFn | undefined {
  if (!terms.length) return undefined;
  return (text) => {
    const ranges = findTerms(text, terms);
    if (!ranges.length) return text;
    return splitMarked(text, ranges).map((p) => (p.marked ? html`<mark>${p.text}</mark>` : p.text));
  };
}

/** Props of {@link RichText}. */
export interface RichTextProps {
  text: string;
  /** Words to mark (empty: none). */
  terms: readonly string[];
}

/** The rendered Markdown of `text`. */
export function RichText({ text, terms }: RichTextProps) {
  const key = terms.join("\u0000");
  return useMemo(() => renderMarkdown(text, markTerms(terms)), [text, key]);
}
