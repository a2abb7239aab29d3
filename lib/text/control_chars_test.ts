import assert from "node:assert/strict";
import fc from "fast-check";
import { stringifyTerminalSafe, stripControls, terminalSafe } from "./mod.ts";

/** Anything a terminal could act on, or that reorders text; what no output may contain. */
// deno-lint-ignore no-control-regex
const FORBIDDEN = /[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]/;
const LONE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

/** [name, hostile input, what terminalSafe must print]. */
const HOSTILE: [string, string, string][] = [
  ["window title (OSC 0, BEL)", "a\x1b]0;pwned title\x07b", "ab"],
  ["window title (OSC 2, ST)", "a\x1b]2;pwned\x1b\\b", "ab"],
  ["erase screen", "before\x1b[2Jafter", "beforeafter"],
  ["cursor home + erase line", "x\x1b[H\x1b[2Ky", "xy"],
  ["colours", "\x1b[1;31mred\x1b[0m plain", "red plain"],
  [
    "OSC 8 hyperlink (ESC \\ terminated)",
    "see \x1b]8;;https://evil.example/\x1b\\docs\x1b]8;;\x1b\\ now",
    "see docs now",
  ],
  ["OSC 8 hyperlink (BEL terminated)", "\x1b]8;;http://x\x07link\x1b]8;;\x07", "link"],
  ["8-bit CSI U+009B", "a\x9b2Jb", "ab"],
  ["8-bit OSC U+009D with 8-bit ST", "a\x9d0;t\x9cb", "ab"],
  ["DCS", "a\x1bPq#0;2;0;0;0\x1b\\b", "ab"],
  ["charset designation ESC ( B", "a\x1b(Bb", "ab"],
  ["keypad mode ESC =", "a\x1b=b", "ab"],
  ["private mode (hide cursor)", "a\x1b[?25lb", "ab"],
  ["NUL", "a\x00b", "ab"],
  ["BEL", "ding\x07dong", "dingdong"],
  ["backspace overstrike", "safe\b\b\b\bEVIL", "safeEVIL"],
  ["carriage return rewrite", "rm -rf /\rls", "rm -rf /ls"],
  ["CRLF becomes one space", "one\r\ntwo", "one two"],
  ["DEL", "a\x7fb", "ab"],
  ["C1 NEL and other C1", "a\x85b\x8dc\x96d", "abcd"],
  ["RLO (Trojan Source)", "user\u202Egnp.exe", "usergnp.exe"],
  ["LRI / PDI isolates", "a\u2066b\u2069c", "abc"],
  ["RLE / PDF embeddings", "a\u202Bb\u202Cc", "abc"],
  ["lone high surrogate", "a\ud83db", "a\ufffdb"],
  ["lone low surrogate", "a\ude00b", "a\ufffdb"],
  ["unterminated OSC stops at the line end", "x\x1b]0;title\nnext line", "x next line"],
  ["lone ESC at the end", "end\x1b", "end"],
  ["tabs and newlines", "a\tb\nc", "a b c"],
  ["line separator", "a\u2028b", "a b"],
];

const CLEAN = [
  "plain ASCII, punctuation: ~!@#$%^&*()_+{}|:\"<>?`-=[]\\;',./",
  "emoji 😀👩‍💻🏳️‍🌈 and flags 🇫🇷",
  "CJK 漢字かなカナ 한국어",
  "accents éèêëàç ñ ß Ω",
  "combining e\u0301 and ZWJ sequences",
  "right to left: שלום עולם مرحبا",
  "marks kept: a\u200Eb\u200Fc",
  "",
];

Deno.test("terminalSafe removes every hostile sequence whole, leaving no residue", () => {
  for (const [name, input, want] of HOSTILE) {
    const got = terminalSafe(input);
    assert.equal(got, want, name);
    assert.doesNotMatch(got, FORBIDDEN, name);
    assert.doesNotMatch(got, LONE, name);
  }
});

Deno.test("clean Unicode passes both functions unchanged", () => {
  for (const s of CLEAN) {
    assert.equal(terminalSafe(s), s);
    assert.equal(stripControls(s), s);
    assert.equal(JSON.parse(stringifyTerminalSafe(s)), s);
  }
});

Deno.test("stripControls keeps tabs and line feeds; terminalSafe keeps line feeds only when multiline", () => {
  assert.equal(stripControls("a\tb\nc\x1b[31m!"), "a\tb\nc!");
  assert.equal(terminalSafe("a\tb\nc\u2029d", { multiline: true }), "a b\nc\nd");
  assert.equal(terminalSafe("a\tb\nc\u2029d"), "a b c d");
});

Deno.test("stringifyTerminalSafe escapes C1, DEL, bidi and line separators, and parses back identical", () => {
  const value = {
    title: "x\x9b2J\x7f\u202E\u2066\u2028\u2029\u200B",
    "k\u202E": ["\x1b[31m", "\ud800", "😀"],
  };
  const json = stringifyTerminalSafe(value);
  assert.doesNotMatch(json, FORBIDDEN);
  assert.doesNotMatch(json, /[\u2028\u2029\u200B]/);
  assert.match(json, /\\u009b/);
  assert.match(json, /\\u202e/);
  assert.deepEqual(JSON.parse(json), value);
  assert.equal(stringifyTerminalSafe([1], 0), "[1]");
  assert.throws(() => stringifyTerminalSafe(undefined), TypeError);
});

Deno.test("no input of any code points yields forbidden output (property)", () => {
  const hostileChars = fc.constantFrom(
    ..."\x00\x07\x08\x0d\x1b\x7f\x85\x90\x9b\x9c\x9d\u202a\u202e\u2066\u2069\ud800\udc00[]\\;P^_0?2J("
      .split(
        "",
      ),
  );
  const text = fc.array(fc.oneof(hostileChars, fc.string({ unit: "binary" })), { maxLength: 40 })
    .map((parts) => parts.join(""));
  fc.assert(
    fc.property(text, (s) => {
      const out = terminalSafe(s);
      const multi = terminalSafe(s, { multiline: true });
      const stripped = stripControls(s);
      return !FORBIDDEN.test(out) && !LONE.test(out) && !/[\t\n]/.test(out) &&
        !FORBIDDEN.test(multi) && !FORBIDDEN.test(stripped) &&
        JSON.stringify(JSON.parse(stringifyTerminalSafe(s))) === JSON.stringify(s) &&
        !FORBIDDEN.test(stringifyTerminalSafe(s));
    }),
    { numRuns: 2000 },
  );
});
