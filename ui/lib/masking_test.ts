import assert from "node:assert/strict";
import { maskedForm } from "../../lib/secrets/mod.ts";
import { plantedKeys } from "../../tests/helpers/secret_keys.ts";
import { splitMarked, utf8Length } from "./highlight.ts";
import {
  CUT_FRAGMENT_KIND,
  cutEdgeTokens,
  shownMessage,
  shownSnippet,
  shownText,
  shownTitle,
  shownTitleText,
} from "./masking.ts";

const enc = (s: string) => utf8Length(s);
const key = (kind: string) => plantedKeys().find((k) => k.kind === kind)!.secret;

/** A hit whose snippet is `before + key + after` cut at `offset` of a longer record. */
function hitAround(before: string, key: string, after: string, offset = 0) {
  const snippet = before + key + after;
  return { snippet, snippet_offset_bytes: offset, at: offset + enc(before), keyBytes: enc(key) };
}

/** The marked pieces of a shown snippet. */
function marked(s: { text: string; ranges: [number, number][] }): string[] {
  return splitMarked(s.text, s.ranges).filter((p) => p.marked).map((p) => p.text);
}

Deno.test("shownText() masks every kind when on and returns the text untouched when off", () => {
  for (const k of plantedKeys()) {
    assert.equal(shownText(k.line, false), k.line);
    const shown = shownText(k.line, true);
    assert.ok(!shown.includes(k.secret), k.kind);
    assert.ok(shown.includes(maskedForm(k.secret, k.kind)), `${k.kind}: ${shown}`);
  }
  const prose =
    "Merged 3f2a9c1d0b7e6a5f4c3b2a1908f7e6d5c4b3a291 for 550e8400-e29b-41d4-a716-446655440000.";
  assert.equal(shownText(prose, true), prose, "hashes and UUIDs are not secrets");
});

Deno.test("shownTitle() masks a key in a title and leaves an ordinary one alone", () => {
  const k = key("openai key");
  const t = shownTitle({ name: null, title: `try ${k}`, session_id: "x" }, true);
  assert.equal(t, `try ${k.slice(0, 4)}…[openai key]`);
  assert.equal(shownTitle({ name: "Café", title: null, session_id: "x" }, true), "Café");
});

Deno.test("shownSnippet(): a search by the key marks the whole masked key, later marks shift", () => {
  for (const before of ["key ", "clé é ", "密钥 ", "🔑 key "]) {
    const gh = key("github token");
    const h = hitAround(before, gh, " then café 🍪 done", 100);
    const cafe = h.at + h.keyBytes + enc(" then ");
    const hit = {
      ...h,
      ranges: [[h.at, h.at + h.keyBytes], [cafe, cafe + enc("café")]] as [number, number][],
    };
    const on = shownSnippet(hit, true);
    assert.ok(!on.text.includes(gh));
    assert.deepEqual(marked(on), [`${gh.slice(0, 4)}…[github token]`, "café"], before);
    const off = shownSnippet(hit, false);
    assert.equal(off.text, hit.snippet);
    assert.deepEqual(marked(off), [gh, "café"], before);
  }
});

Deno.test("shownSnippet(): a match inside a key covers the masked form, not the characters", () => {
  const k = key("openai key");
  const h = hitAround("use ", k, " please");
  const inside = h.at + 10;
  const on = shownSnippet({ ...h, ranges: [[inside, inside + 6]] }, true);
  assert.deepEqual(marked(on), [`${k.slice(0, 4)}…[openai key]`]);
});

Deno.test("shownSnippet(): a key cut by the snippet window is still hidden", () => {
  const anthropic = key("anthropic key"); // the window keeps only its tail
  const tail = anthropic.slice(20);
  const text = `${tail} was pasted into the chat by mistake, rotate it`;
  const at = enc(`${tail} was pasted into the `);
  const on = shownSnippet({
    snippet: text,
    snippet_offset_bytes: 500,
    ranges: [[500 + at, 500 + at + enc("chat")]],
  }, true);
  assert.ok(!on.text.includes(tail.slice(4)), on.text);
  assert.ok(on.text.startsWith(`${tail.slice(0, 4)}…[${CUT_FRAGMENT_KIND}] was pasted`));
  assert.deepEqual(marked(on), ["chat"], "the mark after the fragment moved with it");
  // The window's end: a full-size snippet cut inside a key.
  const filler = "x ".repeat(125);
  const head = anthropic.slice(0, 40);
  const full = `${filler}${head}`;
  const cut = shownSnippet({ snippet: full, snippet_offset_bytes: 0, ranges: [] }, true);
  assert.ok(enc(full) >= 277);
  assert.ok(!cut.text.includes(head), cut.text);
});

Deno.test("cutEdgeTokens() leaves words, hashes, UUIDs and inner text alone", () => {
  const edges = { head: true, tail: true };
  for (
    const text of [
      "implementation details follow and continue for a while, then stop",
      "3f2a9c1d0b7e6a5f4c3b2a1908f7e6d5 at the start and 550e8400-e29b-41d4-a716-446655440000",
      "lib/message_search/query/highlight.ts was changed",
    ]
  ) {
    assert.deepEqual(cutEdgeTokens(text, [[0, 4]], edges), { text, ranges: [[0, 4]] });
  }
  const frag = "Zq8XwLk2Pm4Rt7Ys1Vb9";
  const mid = `see ${frag} here`;
  assert.equal(cutEdgeTokens(mid, [], edges).text, mid, "only a token touching an edge");
  assert.equal(cutEdgeTokens(`${frag} tail`, [], { head: false, tail: true }).text, `${frag} tail`);
});

Deno.test("shownMessage() counts hidden secrets and marks the masked form a term matched", () => {
  const [a, b] = [key("openai key"), key("github token")];
  const text = `first ${a} then ${b}`;
  const on = shownMessage(text, true, [b.slice(5, 20), "then"]);
  assert.equal(on.hidden, 2);
  assert.equal(on.text, `first ${a.slice(0, 4)}…[openai key] then ${b.slice(0, 4)}…[github token]`);
  assert.deepEqual(on.terms.slice(2), [`${b.slice(0, 4)}…[github token]`]);
  const off = shownMessage(text, false, ["then"]);
  assert.deepEqual(off, { text, hidden: 0, terms: ["then"] });
});

Deno.test("shownTitleText() hides a key cut by a title's length cap", () => {
  // A producer cut the title at 100 code points, 29 characters into a key: too short for
  // the key's own rule, still too much to show.
  const fragment = "sk-proj-Q7xTm2Lp9ZkR4wNb8Vc3d";
  const lead = "word ".repeat(14);
  const title = `${lead}${fragment}…`;
  assert.equal([...title].length, 100);
  assert.equal(shownText(title, true), title, "the masker alone does not see it");
  const shown = shownTitleText(title, true);
  assert.ok(!shown.includes(fragment), shown);
  assert.equal(shown, `${lead}sk-p…[${CUT_FRAGMENT_KIND}]…`);
  assert.equal(shownTitleText(title, false), title);
  const short = "Fix the café login bug";
  assert.equal(shownTitleText(short, true), short);
});
