/**
 * Text with highlighted ranges: the ranges (UTF-16 indices, already converted from the
 * server's byte offsets or found client-side) become `<mark>` elements, so each mark's
 * text content is exactly the matched original text.
 */
import { html } from "htm/preact";
import { type IndexRange, splitMarked } from "../lib/highlight.ts";

/** Renders `text` with `ranges` marked. */
export function MarkedText({ text, ranges }: { text: string; ranges: readonly IndexRange[] }) {
  if (!ranges.length) return html`${text}`;
  const parts = splitMarked(text, ranges);
  return html`${parts.map((p) => (p.marked ? html`<mark>${p.text}</mark>` : p.text))}`;
}
