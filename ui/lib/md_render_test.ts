import assert from "node:assert/strict";
import { h, type VNode } from "preact";
import { type MarkFn, renderMarkdown } from "./md_render.ts";
import { BLOCK_DEPTH_MAX, TABLE_COLS_MAX, TABLE_PAD_CELLS_MAX } from "./md_blocks.ts";
import { parseInline, safeHref } from "./md_inline.ts";

type Child = VNode<unknown> | string | number | boolean | null | undefined | Child[];

const esc = (s: string) =>
  s.replaceAll("&", "&amp;").replaceAll("<", "&lt;").replaceAll(">", "&gt;");

/** A tiny serializer: elements as tags, text escaped (so text can never look like a tag). */
function html(c: Child): string {
  if (c === null || c === undefined || typeof c === "boolean") return "";
  if (typeof c === "string" || typeof c === "number") return esc(String(c));
  if (Array.isArray(c)) return c.map(html).join("");
  if (typeof c.type === "function") {
    return html((c.type as (p: unknown) => Child)(c.props));
  }
  const { children, ...attrs } = c.props as Record<string, unknown>;
  const a = Object.entries(attrs).map(([k, v]) => ` ${k}="${String(v)}"`).join("");
  return `<${c.type}${a}>${html(children as Child)}</${c.type}>`;
}

/** Every element vnode under `c`, with its depth. */
function elements(c: Child, depth = 0, out: { v: VNode; depth: number }[] = []) {
  if (Array.isArray(c)) c.forEach((x) => elements(x, depth, out));
  else if (c && typeof c === "object") {
    out.push({ v: c, depth });
    elements((c.props as { children?: Child }).children, depth + 1, out);
  }
  return out;
}

const render = (s: string, mark?: MarkFn) => renderMarkdown(s, mark) as Child;
const md = (s: string, mark?: MarkFn) => html(render(s, mark));
const body = (s: string) => md(s).replace(/^<div class="md">/, "").replace(/<\/div>$/, "");

const ALLOWED = new Set([
  "div",
  "p",
  "h3",
  "h4",
  "h5",
  "h6",
  "pre",
  "code",
  "blockquote",
  "ul",
  "ol",
  "li",
  "hr",
  "br",
  "em",
  "strong",
  "a",
  "span",
  "table",
  "thead",
  "tbody",
  "tr",
  "th",
  "td",
]);
const ALLOWED_PROPS = new Set([
  "children",
  "class",
  "href",
  "rel",
  "target",
  "start",
  "data-lang",
  "scope",
  "colspan",
]);

/** Asserts the tree holds only listed elements and attributes, and only safe hrefs. */
function assertSafe(src: string): void {
  for (const { v } of elements(render(src))) {
    assert.ok(ALLOWED.has(v.type as string), `element ${String(v.type)} from ${src}`);
    for (const [k, val] of Object.entries(v.props as Record<string, unknown>)) {
      assert.ok(ALLOWED_PROPS.has(k), `prop ${k} from ${src}`);
      if (k === "href") assert.match(String(val), /^(https?:\/\/|mailto:)/, src);
    }
  }
}

Deno.test("paragraphs, headings, emphasis, strong and inline code", () => {
  assert.equal(
    body("# Title\n\nSome *em*, **strong**, `code` and ***both***.\nNext line."),
    '<h3 class="md-h">Title</h3><p>Some <em>em</em>, <strong>strong</strong>, ' +
      '<code class="md-ic">code</code> and <em><strong>both</strong></em>.\nNext line.</p>',
  );
  assert.equal(body("Setext\n======"), '<h3 class="md-h">Setext</h3>');
  assert.equal(body("a\n\n---\n\nb"), "<p>a</p><hr></hr><p>b</p>");
  assert.equal(body("snake_case_name and 2 * 3 * 4"), "<p>snake_case_name and 2 * 3 * 4</p>");
  assert.equal(body("``a ` b``"), '<p><code class="md-ic">a ` b</code></p>');
  assert.equal(body("\\*not em\\*"), "<p>*not em*</p>");
});

Deno.test("fenced and indented code blocks keep their text verbatim; an unclosed fence runs to the end", () => {
  assert.equal(
    body("```ts\nconst x = <T>(a: T) => a ** 2;\n  **not bold**\n```\nafter"),
    '<pre class="md-pre"><code data-lang="ts">const x = &lt;T&gt;(a: T) =&gt; a ** 2;\n' +
      "  **not bold**</code></pre><p>after</p>",
  );
  assert.equal(
    body("~~~\nopen fence\n\n# still code"),
    '<pre class="md-pre"><code>open fence\n\n# still code</code></pre>',
  );
  assert.equal(
    body("para\n\n    indented();\n      more();\n\nback"),
    '<p>para</p><pre class="md-pre"><code>indented();\n  more();</code></pre><p>back</p>',
  );
});

Deno.test("nested bullet and ordered lists, tight and loose, and block quotes", () => {
  assert.equal(
    body("- a\n  - b\n    1. c\n    2. d\n- e"),
    "<ul><li>a<ul><li>b<ol><li>c</li><li>d</li></ol></li></ul></li><li>e</li></ul>",
  );
  assert.equal(body("3. x\n4. y"), '<ol start="3"><li>x</li><li>y</li></ol>');
  assert.equal(body("- a\n\n- b"), "<ul><li><p>a</p></li><li><p>b</p></li></ul>");
  assert.equal(
    body("> quoted\nlazy line\n> - item"),
    "<blockquote><p>quoted\nlazy line</p><ul><li>item</li></ul></blockquote>",
  );
  assert.equal(
    body("1. step\n   ```sh\n   ls\n   ```"),
    '<ol><li>step<pre class="md-pre"><code data-lang="sh">ls</code></pre></li></ol>',
  );
});

Deno.test("GFM pipe tables: header, alignment, inline Markdown in cells, escaped pipes", () => {
  assert.equal(
    body("| Name | `cmd` | Size |\n|:-----|:---:|-----:|\n| **a** | `x\\|y` | 1 |\n| b |  | 22 |"),
    '<div class="md-table-wrap"><table class="md-table"><thead><tr>' +
      '<th scope="col" class="md-al-left">Name</th>' +
      '<th scope="col" class="md-al-center"><code class="md-ic">cmd</code></th>' +
      '<th scope="col" class="md-al-right">Size</th></tr></thead><tbody>' +
      '<tr><td class="md-al-left"><strong>a</strong></td>' +
      '<td class="md-al-center"><code class="md-ic">x|y</code></td>' +
      '<td class="md-al-right">1</td></tr>' +
      '<tr><td class="md-al-left">b</td><td class="md-al-center"></td>' +
      '<td class="md-al-right">22</td></tr></tbody></table></div>',
  );
  // No outer pipes; a header-only table has no tbody.
  assert.equal(
    body("a | b\n--- | ---"),
    '<div class="md-table-wrap"><table class="md-table"><thead><tr><th scope="col">a</th>' +
      '<th scope="col">b</th></tr></thead></table></div>',
  );
});

Deno.test("GFM tables: ragged rows are padded and cut to the header, the table ends at a blank line or block", () => {
  const rows = (src: string) =>
    elements(render(src)).filter((e) => e.v.type === "tr").map(({ v }) =>
      elements((v.props as { children?: Child }).children).filter((e) =>
        e.v.type === "td" || e.v.type === "th"
      ).length
    );
  assert.deepEqual(rows("| a | b | c |\n|---|---|---|\n| 1 |\n| 1 | 2 | 3 | 4 | 5 |"), [3, 3, 3]);
  assert.match(body("| a | b |\n|---|---|\n| 1 | 2 |\n\nafter"), /<\/table><\/div><p>after<\/p>$/);
  assert.match(body("| a | b |\n|---|---|\n| 1 | 2 |\n# head"), /<\/table><\/div><h3/);
  // Padding is bounded per message: past TABLE_PAD_CELLS_MAX a short row ends in one
  // spanning cell, so its width still matches the header.
  const many = "|" + " h |".repeat(TABLE_COLS_MAX) + "\n|" + "-|".repeat(TABLE_COLS_MAX) + "\n" +
    "x\n".repeat(TABLE_PAD_CELLS_MAX);
  const tds = elements(render(many)).filter((e) => e.v.type === "td").map(({ v }) => v);
  const spans = tds.filter((v) => (v.props as { colspan?: number }).colspan);
  // Each of the rows: its one cell, plus padding from the budget or one spanning cell.
  assert.ok(tds.length <= 3 * TABLE_PAD_CELLS_MAX, `${tds.length} cells`);
  assert.ok(
    spans.length > 0 &&
      spans.every((v) => (v.props as { colspan?: number }).colspan === TABLE_COLS_MAX - 1),
  );
  // A line without a pipe right under the table is one more row (as on GitHub).
  assert.deepEqual(rows("| a | b |\n|---|---|\nloose"), [2, 2]);
  // A table interrupts a paragraph; the lines before it stay a paragraph.
  assert.match(
    body("Results:\n| a | b |\n|---|---|\n| 1 | 2 |"),
    /^<p>Results:<\/p><div class="md-table-wrap">/,
  );
});

Deno.test("GFM tables: what is not a table stays what it was", () => {
  // Delimiter row cell count differs from the header's: a paragraph.
  assert.equal(body("| a | b |\n|---|\n| 1 | 2 |"), "<p>| a | b |\n|---|\n| 1 | 2 |</p>");
  // No pipe in the delimiter row: a setext heading; no pipe in the header: a heading too.
  assert.equal(body("| a |\n---"), '<h4 class="md-h">| a |</h4>');
  assert.equal(body("a\n---"), '<h4 class="md-h">a</h4>');
  // Not a delimiter (text in it), inside code, indented 4: never a table.
  assert.equal(body("| a | b |\n| x | y |"), "<p>| a | b |\n| x | y |</p>");
  assert.match(body("```\n| a | b |\n|---|---|\n```"), /^<pre/);
  assert.match(body("    | a | b |\n    |---|---|"), /^<pre/);
  // Wider than TABLE_COLS_MAX: text, never a table (padding would be quadratic).
  const wide = "|" + " x |".repeat(TABLE_COLS_MAX + 1) + "\n|" + "---|".repeat(TABLE_COLS_MAX + 1);
  assert.ok(!body(wide).includes("<table"));
  for (
    const src of [
      "| <img src=x onerror=alert(1)> | [x](javascript:alert(1)) |\n|---|---|\n| <script> | b |",
    ]
  ) {
    assertSafe(src);
  }
});

Deno.test("links: http(s) and mailto become safe anchors; every other scheme stays text", () => {
  assert.equal(
    body('[docs](https://example.com/a_(b) "t") and <https://x.org> and https://y.org/p.'),
    '<p><a href="https://example.com/a_(b)" rel="noopener noreferrer" target="_blank">docs</a>' +
      ' and <a href="https://x.org/" rel="noopener noreferrer" target="_blank">https://x.org</a>' +
      ' and <a href="https://y.org/p" rel="noopener noreferrer" target="_blank">https://y.org/p</a>.</p>',
  );
  assert.match(body("[mail](mailto:a@b.c)"), /<a href="mailto:a@b.c"/);
  for (
    const bad of [
      "[x](javascript:alert(1))",
      "[x](JaVaScRiPt:alert(1))",
      "[x](data:text/html,<script>alert(1)</script>)",
      "[x](vbscript:msgbox)",
      "[x](/relative/path)",
      "[x](//evil.example)",
      "<javascript:alert(1)>",
      "[x](java\tscript:alert(1))",
      "[x](<javascript:alert(1)>)",
    ]
  ) {
    assert.ok(!body(bad).includes("<a "), bad);
  }
  assert.equal(safeHref("https://ok.example/x"), "https://ok.example/x");
  assert.equal(safeHref("https://ok.example/\u0000x"), null);
  assert.equal(body("[**b**](https://e.com)").includes("<strong>b</strong></a>"), true);
});

Deno.test("raw HTML and entities are text: no element, attribute or handler comes from the message", () => {
  const hostile = [
    "<script>window.__pwned = 1</script>",
    '<img src=x onerror="window.__pwned=1">',
    "<svg/onload=alert(1)>",
    '<a href="javascript:alert(1)">click</a>',
    "&lt;script&gt;alert(1)&lt;/script&gt; &#60;img&#62; &amp;",
    "<iframe src=https://evil.example></iframe>",
    "```\n<script>alert(1)</script>\n```",
    "`<b onmouseover=alert(1)>`",
    "[<img src=x onerror=alert(1)>](https://e.com)",
    "**<style>body{display:none}</style>**",
    "<!-- comment --> <![CDATA[x]]> <?php ?>",
  ];
  for (const src of hostile) assertSafe(src);
  assert.equal(
    body("<script>window.__pwned = 1</script>"),
    "<p>&lt;script&gt;window.__pwned = 1&lt;/script&gt;</p>",
  );
  assert.equal(body("&lt;b&gt; &#60;i&#62;"), "<p>&amp;lt;b&amp;gt; &amp;#60;i&amp;#62;</p>");
});

Deno.test("mark renders every text leaf, code included", () => {
  const mark: MarkFn = (t) =>
    t.split(/(zebra)/).map((p) => (p === "zebra" ? h("mark", null, p) : p));
  assert.equal(
    md("A **zebra** `zebra()`\n\n```\nzebra\n```", mark),
    '<div class="md"><p>A <strong><mark>zebra</mark></strong> <code class="md-ic">' +
      '<mark>zebra</mark>()</code></p><pre class="md-pre"><code><mark>zebra</mark></code></pre></div>',
  );
});

Deno.test("deep nesting is capped, never a stack overflow", () => {
  const deep = elements(render(">".repeat(5000) + " x"));
  assert.ok(Math.max(...deep.map((e) => e.depth)) <= BLOCK_DEPTH_MAX + 3);
  const list = elements(render("- ".repeat(5000) + "x"));
  assert.ok(Math.max(...list.map((e) => e.depth)) <= 2 * BLOCK_DEPTH_MAX + 4);
  const em = parseInline("*a ".repeat(20_000) + "b" + " a*".repeat(20_000));
  let depth = 0;
  for (let n: unknown = em; Array.isArray(n) && n.length;) {
    const last = n.find((x) => x && typeof x === "object" && "c" in x) as
      | { c: unknown }
      | undefined;
    if (!last) break;
    depth++;
    n = last.c;
  }
  assert.ok(depth <= 30, `inline depth ${depth}`);
});

/** The faster of two runs (the machine may be shared: one slow run is noise). */
function timed(src: string): number {
  let best = Infinity;
  for (let r = 0; r < 2; r++) {
    const t0 = performance.now();
    renderMarkdown(src);
    best = Math.min(best, performance.now() - t0);
  }
  return best;
}

Deno.test("pathological input renders in linear time (100k-character lines, unclosed constructs)", () => {
  const cases: Record<string, (n: number) => string> = {
    "stars and underscores": (n) => "*_".repeat(n / 2),
    "alternating emphasis": (n) => "*a _b ".repeat(n / 6),
    "open brackets": (n) => "[".repeat(n),
    "bracket pairs with parens": (n) => "[a](".repeat(n / 4),
    "angle brackets": (n) => "<".repeat(n),
    "growing backtick runs": (n) =>
      Array.from({ length: Math.sqrt(2 * n) | 0 }, (_, i) => "`".repeat(i + 1) + " ").join(""),
    "single backticks": (n) => "` ".repeat(n / 2),
    "quotes in titles": (n) => '[a](b "'.repeat(n / 7),
    "bare urls": (n) => "https://a.b/(".repeat(n / 13),
    "escapes": (n) => "\\".repeat(n),
    "long word": (n) => "x".repeat(n),
    "spaces then hashes": (n) => "# " + " ".repeat(n) + "#",
    "unclosed fence": (n) => "```\n" + "line\n".repeat(n / 5),
    "many list items": (n) => "- item\n".repeat(n / 7),
    "nested quotes": (n) => "> ".repeat(n / 2),
    "nested lists": (n) => "- ".repeat(n / 2) + "x",
    "blank-separated items": (n) => "- a\n\n  b\n".repeat(n / 9),
    "thematic-ish": (n) => "- - - - - x\n".repeat(n / 12),
    "a wide table header over many one-cell rows": (n) =>
      "|" + " a |".repeat(TABLE_COLS_MAX) + "\n|" + "-|".repeat(TABLE_COLS_MAX) + "\n" +
      "x\n".repeat(n / 2),
    "pipes everywhere": (n) => "| ".repeat(n / 4) + "\n" + "|-".repeat(n / 4),
    "table-looking paragraph lines": (n) => "a | b\n".repeat(n / 6),
  };
  for (const [name, make] of Object.entries(cases)) {
    const small = timed(make(25_000));
    const big = timed(make(100_000));
    // Linear: 4× the input takes about 4× the time (quadratic would take 16×). Either the
    // whole 100k-char input is fast outright, or it scales linearly; never catastrophic.
    assert.ok(big < 10_000, `${name}: ${big.toFixed(0)} ms`);
    assert.ok(
      big < 1000 || big < 8 * small + 50,
      `${name}: ${small.toFixed(0)} ms for 25k chars, ${big.toFixed(0)} ms for 100k`,
    );
  }
});
