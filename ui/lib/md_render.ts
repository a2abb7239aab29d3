/**
 * Safe Markdown → Preact vnodes for message text in the detail view. The source is
 * parsed into a tree (md_blocks.ts, md_inline.ts) and every node becomes an element
 * from a fixed list (p, h3–h6, pre/code, blockquote, ul/ol/li, hr, table/thead/tbody/
 * tr/th/td, em, strong, code, a, span, div) whose only attributes are set here: text always travels as a text child,
 * never as markup (no innerHTML, no dangerouslySetInnerHTML), so `<script>` in a
 * message is eleven characters on screen. Links carry an href that safeHref accepted
 * (http:, https:, mailto:) and open in a new tab with rel="noopener noreferrer".
 * Headings start at h3: the page's h1 is the session and h2 its sections. A table sits in
 * a `md-table-wrap` box that scrolls sideways, so a wide one never widens the page; its
 * column alignment is a class (`md-al-left|center|right`), not a style attribute. `mark`
 * (when given) renders each text leaf — including code — so query words can be marked
 * inside the formatted text. Pure apart from building vnodes; never throws.
 */
import { type ComponentChildren, h } from "preact";
import { type Align, type Block, parseBlocks } from "./md_blocks.ts";
import type { Inline } from "./md_inline.ts";

/** Renders one text leaf (for example with query words marked). */
export type MarkFn = (text: string) => ComponentChildren;

const plain: MarkFn = (t) => t;

function inlines(nodes: readonly Inline[], mark: MarkFn, inLink = false): ComponentChildren[] {
  return nodes.map((n) => {
    switch (n.t) {
      case "text":
        return mark(n.v);
      case "code":
        return h("code", { class: "md-ic" }, mark(n.v));
      case "em":
      case "strong":
        return h(n.t, null, inlines(n.c, mark, inLink));
      case "link":
        // A link never nests in a link (the parser forbids it; this is the belt).
        return inLink ? inlines(n.c, mark, true) : h("a", {
          href: n.href,
          rel: "noopener noreferrer",
          target: "_blank",
        }, inlines(n.c, mark, true));
    }
  });
}

function table(b: Extract<Block, { t: "table" }>, mark: MarkFn): ComponentChildren {
  const cell = (tag: "th" | "td", c: readonly Inline[], a: Align) => {
    const props: Record<string, string> = tag === "th" ? { scope: "col" } : {};
    if (a) props.class = `md-al-${a}`;
    return h(tag, props, inlines(c, mark));
  };
  const head = h("thead", null, h("tr", null, b.head.map((c, k) => cell("th", c, b.align[k]!))));
  const rows = b.rows.map((r) =>
    h(
      "tr",
      null,
      r.cells.map((c, k) => cell("td", c, b.align[k]!)),
      r.fill > 0 ? h("td", { colspan: r.fill }) : null,
    )
  );
  return h(
    "div",
    { class: "md-table-wrap" },
    h("table", { class: "md-table" }, head, rows.length ? h("tbody", null, rows) : null),
  );
}

function block(b: Block, mark: MarkFn, tight: boolean): ComponentChildren {
  switch (b.t) {
    case "p":
      return tight ? inlines(b.c, mark) : h("p", null, inlines(b.c, mark));
    case "h":
      return h(`h${Math.min(6, b.level + 2)}`, { class: "md-h" }, inlines(b.c, mark));
    case "code":
      return h(
        "pre",
        { class: "md-pre" },
        h("code", b.lang ? { "data-lang": b.lang.slice(0, 40) } : null, mark(b.v)),
      );
    case "quote":
      return h("blockquote", null, blocks(b.c, mark, false));
    case "hr":
      return h("hr", null);
    case "table":
      return table(b, mark);
    case "list": {
      const items = b.items.map((it) => h("li", null, blocks(it, mark, b.tight)));
      return b.ordered
        ? h("ol", b.start === 1 ? null : { start: b.start }, items)
        : h("ul", null, items);
    }
  }
}

function blocks(bs: readonly Block[], mark: MarkFn, tight: boolean): ComponentChildren[] {
  // In a tight list item, consecutive paragraphs still need a visible break between them.
  const out: ComponentChildren[] = [];
  bs.forEach((b, i) => {
    if (tight && b.t === "p" && i > 0) out.push(h("br", null));
    out.push(block(b, mark, tight));
  });
  return out;
}

/** Renders Markdown source as vnodes (see the module header). */
export function renderMarkdown(src: string, mark: MarkFn = plain): ComponentChildren {
  return h("div", { class: "md" }, blocks(parseBlocks(src), mark, false));
}
