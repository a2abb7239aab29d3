import assert from "node:assert/strict";
import { parseMockScript } from "./mock_script.ts";
import { createMockProvider } from "./provider.ts";
import { InvalidInputError } from "../errors.ts";

Deno.test("scripts accept comments and trailing commas", () => {
  const s = parseMockScript('{ // c\n "turns": [ { "text": "hi", "done": true, }, ], }', "s.jsonc");
  assert.equal(s.turns[0]!.text, "hi");
});

Deno.test("errors name the file, line and column of the problem", () => {
  const cases: [string, RegExp][] = [
    [
      '{\n "turns": [\n  {"text": 1}\n ]\n}',
      /"f\.jsonc" at line 3, column 12 \("turns\.0\.text"\)/,
    ],
    ['{\n "turns": []\n}', /line 2, column 11 \("turns"\)/],
    ['{\n "turns": [{}]\n}', /line 2, column 12 \("turns\.0"\): a turn needs/],
    ['{\n "turns": [{"text": "x", "bogus": 1}]\n}', /line 2, column 12 \("turns\.0"\)/],
    ['{ "turns": [ {"text": "x" ', /line 1, column \d+: /],
  ];
  for (const [text, re] of cases) {
    assert.throws(
      () => parseMockScript(text, "f.jsonc"),
      (e) => e instanceof InvalidInputError && re.test(e.message),
      text,
    );
  }
});

Deno.test("the mock is deterministic with and without a script", () => {
  const ctx = { turnIndex: 0, task: "Fix it", messages: [] };
  const a = createMockProvider(null).next(ctx);
  const b = createMockProvider(null).next(ctx);
  assert.deepEqual(a, b);
  assert.equal(a.text, "Working on: Fix it");
  assert.equal(createMockProvider(null).next({ ...ctx, turnIndex: 1 }).done, true);
  const s = parseMockScript('{"turns":[{"text":"one"}]}', "s");
  assert.equal(createMockProvider(s).next(ctx).text, "one");
  assert.deepEqual(createMockProvider(s).next({ ...ctx, turnIndex: 1 }), {
    done: true,
    usage: { input: 0, output: 0 },
  });
});
