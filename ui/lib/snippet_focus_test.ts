import assert from "node:assert/strict";
import fc from "fast-check";
import { utf8Length } from "./highlight.ts";
import { cardSnippet, focusSnippet } from "./snippet_focus.ts";
import type { ShownSnippet } from "./masking.ts";

/** The marked substrings. */
const marked = (s: ShownSnippet) => s.ranges.map(([a, b]) => s.text.slice(a, b));

/** A hit over `text` (the whole record) with `needle` highlighted by byte range. */
function hitOf(text: string, needle: string, o: { cutEnd?: boolean } = {}) {
  const i = text.indexOf(needle);
  const s = utf8Length(text.slice(0, i));
  return {
    snippet: text,
    snippet_offset_bytes: 0,
    ranges: [[s, s + utf8Length(needle)]] as [number, number][],
    snippet_cut_end: o.cutEnd ?? false,
  };
}

const LIST = Array.from({ length: 10 }, (_, i) => `${i + 1}. step ${i + 1} of the plan`);

Deno.test("focusSnippet() starts a list at the line before the one holding the first highlight", () => {
  const text = LIST.map((l, i) => (i === 7 ? "8. rotate the zebra key" : l)).join("\n");
  const i = text.indexOf("zebra");
  const f = focusSnippet({ text, ranges: [[i, i + 5]] });
  assert.ok(f.cutStart);
  assert.ok(f.text.startsWith("7. step 7 of the plan\n8. rotate the "), f.text);
  assert.deepEqual(marked(f), ["zebra"]);
});

Deno.test("focusSnippet() keeps a highlight on the first two lines where it is", () => {
  for (const line of [0, 1]) {
    const text = LIST.map((l, i) => (i === line ? `${l} zebra` : l)).join("\n");
    const i = text.indexOf("zebra");
    const f = focusSnippet({ text, ranges: [[i, i + 5]] });
    assert.equal(f.cutStart, false, `line ${line}`);
    assert.equal(f.text, text);
  }
});

Deno.test("focusSnippet() skips a blank line before the hit and cuts a long line at a word edge", () => {
  const code = "Run this:\n\nzebra --fast\n```";
  const i = code.indexOf("zebra");
  const f = focusSnippet({ text: code, ranges: [[i, i + 5]] });
  assert.equal(f.text, "zebra --fast\n```");
  const fenced = "Run this:\n```\nzebra --fast\n```";
  const k = fenced.indexOf("zebra");
  assert.equal(focusSnippet({ text: fenced, ranges: [[k, k + 5]] }).text, "```\nzebra --fast\n```");
  const long = "word ".repeat(40) + "zebra tail";
  const j = long.indexOf("zebra");
  const g = focusSnippet({ text: long, ranges: [[j, j + 5]] }, 40);
  assert.ok(g.cutStart);
  assert.ok(g.text.startsWith("word "), g.text);
  assert.ok(g.text.indexOf("zebra") <= 40, g.text);
  assert.deepEqual(marked(g), ["zebra"]);
});

Deno.test("focusSnippet() never splits a surrogate pair in a long unspaced run", () => {
  const text = "😀".repeat(60) + "龍";
  const i = text.indexOf("龍");
  const f = focusSnippet({ text, ranges: [[i, i + 1]] }, 9);
  assert.ok(!/^[\udc00-\udfff]/.test(f.text), "starts on a whole code point");
  assert.deepEqual(marked(f), ["龍"]);
});

Deno.test("focusSnippet() keeps every mark's text exactly (property)", () => {
  fc.assert(
    fc.property(
      fc.array(fc.constantFrom("a", "b", " ", "\n", "é", "😀", "龍", "x"), { maxLength: 200 }),
      fc.array(fc.tuple(fc.nat(), fc.nat(8)), { maxLength: 6 }),
      fc.integer({ min: 1, max: 120 }),
      (chars, picks, lead) => {
        const text = chars.join("");
        if (!text.length) return;
        // Ranges on whole code points, sorted and disjoint, as highlight.ts makes them.
        const cuts = [...text].reduce<number[]>((a, ch) => [...a, a.at(-1)! + ch.length], [0]);
        const ranges: [number, number][] = [];
        let at = 0;
        for (const [p, n] of picks) {
          const s = cuts.findIndex((c) => c >= at + (p % 7));
          if (s < 0 || s + n + 1 >= cuts.length) break;
          ranges.push([cuts[s]!, cuts[s + n + 1]!]);
          at = cuts[s + n + 1]! + 1;
        }
        const before = marked({ text, ranges });
        const f = focusSnippet({ text, ranges }, lead);
        assert.deepEqual(marked(f), before);
        assert.ok(text.endsWith(f.text));
      },
    ),
  );
});

Deno.test("cardSnippet(): masked highlights stay on the masked key, edges get their …", () => {
  const key = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8";
  const text = [...LIST.slice(0, 7), `8. export GITHUB_TOKEN=${key}`, ...LIST.slice(8)].join("\n");
  const c = cardSnippet(hitOf(text, key, { cutEnd: true }), true);
  assert.equal(c.lead, "…");
  assert.equal(c.tail, "…");
  assert.ok(!c.text.includes(key), "the key is masked");
  const [m] = marked(c);
  assert.ok(m && m.startsWith("ghp_") && m !== key, `the masked key is marked: ${m}`);
  assert.ok(c.text.startsWith("7. step 7"), c.text);
  const plain = cardSnippet(hitOf(text, key), false);
  assert.deepEqual(marked(plain), [key]);
  assert.equal(plain.tail, "", "the message ends with the snippet");
  // An older server sends no snippet_cut_end: no trailing "…".
  const { snippet_cut_end: _, ...old } = hitOf("short zebra note", "zebra");
  assert.deepEqual([cardSnippet(old, true).lead, cardSnippet(old, true).tail], ["", ""]);
});
