import assert from "node:assert/strict";
import {
  MOCK_SCRIPT_EXAMPLE,
  mockScriptHelp,
  mockScriptKeys,
  parseMockScript,
} from "./mock_script.ts";
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

Deno.test("a syntax error says what is wrong in words, with the file, line and column", () => {
  const cases: [string, string][] = [
    [
      '{\n "turns": [\n  {"text": "a"}\n  {"text": "b"}\n ]\n}',
      'Invalid mock script "s.jsonc" at line 4, column 3: a comma is missing',
    ],
    [
      '{\n  "turns" [{"done": true}]\n}',
      'Invalid mock script "s.jsonc" at line 2, column 11: a colon is missing after the property name',
    ],
    [
      '{ "turns": [ {"text": "x" ',
      'Invalid mock script "s.jsonc" at line 1, column 27: unexpected end of file: a closing brace } is missing',
    ],
    [
      "{\n  'turns': []\n}",
      `Invalid mock script "s.jsonc" at line 2, column 3: unexpected "'turns'": strings and property names need double quotes`,
    ],
    [
      '{"turns": [{"done": tru}]}',
      'Invalid mock script "s.jsonc" at line 1, column 21: unexpected "tru": strings and property names need double quotes',
    ],
    [
      '{"turns": [{"text": "abc}]}',
      'Invalid mock script "s.jsonc" at line 1, column 21: a string is not closed with "',
    ],
    [
      '{"turns": [{"text": "a\tb"}]}',
      'Invalid mock script "s.jsonc" at line 1, column 21: a string holds a control character (a raw tab or line break?)',
    ],
    [
      '{"turns": [{"text": "\\q"}]}',
      'Invalid mock script "s.jsonc" at line 1, column 21: an unknown escape after \\ in a string',
    ],
    [
      '{"turns": [{"done": true}]}\n/* note',
      'Invalid mock script "s.jsonc" at line 2, column 1: a block comment is not closed with */',
    ],
    [
      '{"turns": [{"done": true}]}\nextra',
      'Invalid mock script "s.jsonc" at line 2, column 1: unexpected text after the end of the object',
    ],
    [
      '{"turns": [{"done": true}, ]]}',
      'Invalid mock script "s.jsonc" at line 1, column 29: a comma is missing',
    ],
    [
      "  \n",
      'Invalid mock script "s.jsonc" at line 1, column 1: the file is empty: expected an object with "turns"',
    ],
  ];
  for (const [text, want] of cases) {
    assert.throws(() => parseMockScript(text, "s.jsonc"), (e) => {
      assert.ok(e instanceof InvalidInputError);
      assert.equal(e.message, want, JSON.stringify(text));
      // The parser's identifiers (CommaExpected, InvalidSymbol, …) never leak: words only.
      assert.doesNotMatch(e.message, /[a-z][A-Z]/);
      return true;
    });
  }
});

Deno.test("the help lists every key of the script schema with a description, and its example parses", () => {
  const help = mockScriptHelp();
  const keys = mockScriptKeys();
  // The whole schema, nested keys included.
  assert.deepEqual(keys.map((k) => k.key).sort(), [
    "ask_human",
    "commands",
    "done",
    "exec",
    "input",
    "model",
    "nonce",
    "output",
    "pty",
    "reasoning",
    "text",
    "timeout_ms",
    "turns",
    "usage",
  ]);
  for (const k of keys) {
    assert.ok(k.description.length > 0, `"${k.key}" has a description`);
    assert.match(help, new RegExp(`^ +${k.key} +${k.description.split(" ")[0]}`, "m"), k.key);
  }
  assert.match(help, /JSONC/);
  const example = parseMockScript(MOCK_SCRIPT_EXAMPLE, "example");
  const used = new Set(example.turns.flatMap((t) => Object.keys(t)));
  for (const k of ["text", "reasoning", "commands", "ask_human", "done", "usage"]) {
    assert.ok(used.has(k), `the example shows "${k}"`);
  }
  assert.ok(help.includes(MOCK_SCRIPT_EXAMPLE.split("\n")[1]!));
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
