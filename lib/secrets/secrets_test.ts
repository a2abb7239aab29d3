import assert from "node:assert/strict";
import { findSecrets, maskedForm, maskSecrets, maskWithRanges, SECRET_KINDS } from "./mod.ts";
import { SECRET_RULES } from "./rules.ts";
import { plantedKeys, randomChars } from "../../tests/helpers/secret_keys.ts";

const bytes = (s: string) => new TextEncoder().encode(s).length;

Deno.test("every generated key of every kind is found with its kind and masked as first 4 + kind", () => {
  // Fresh random keys each round: the rules must hold for the format, not for one sample.
  for (let round = 0; round < 50; round++) {
    for (const p of plantedKeys()) {
      const spans = findSecrets(p.line);
      const hit = spans.find((s) => p.line.slice(s.start, s.end) === p.secret);
      assert.ok(hit, `${p.kind} not found in ${JSON.stringify(p.line)}`);
      assert.equal(hit.kind, p.kind, JSON.stringify(p.line));
      const { text } = maskSecrets(p.line);
      assert.ok(!text.includes(p.secret), `${p.kind} left in ${text}`);
      const expected = p.secret.length >= 12
        ? `${p.secret.slice(0, 4)}…[${p.kind}]`
        : `${p.secret.slice(0, Math.floor(p.secret.length / 3))}…[${p.kind}]`;
      assert.ok(text.includes(expected), `${text} lacks ${expected}`);
      // The same line as a JSONL transcript holds it (a JSON string: escaped quotes and
      // newlines) is masked too: the report zip masks session.jsonl as it is on disk.
      const escaped = JSON.stringify(p.line);
      const escapedMasked = maskSecrets(escaped).text;
      assert.ok(!escapedMasked.includes(JSON.stringify(p.secret).slice(1, -1)), escaped);
    }
  }
});

Deno.test("the kinds table names every rule's kind, and every kind has a generated key", () => {
  const kinds = new Set(SECRET_KINDS.map((k) => k.kind));
  for (const r of SECRET_RULES) assert.ok(kinds.has(r.kind), r.kind);
  const planted = new Set(plantedKeys().map((p) => p.kind));
  assert.deepEqual([...kinds].filter((k) => !planted.has(k)), []);
  for (const r of SECRET_RULES) {
    assert.ok(r.re.global && r.re.hasIndices, `${r.id} needs the g and d flags`);
  }
});

Deno.test("maskedForm() keeps the first 4 characters, or a third of a short secret", () => {
  assert.equal(maskedForm("sk-abcdefghijklmnop", "openai key"), "sk-a…[openai key]");
  assert.equal(maskedForm("hunter22!", "password"), "hun…[password]");
  assert.equal(maskedForm("🔑🔑🔑🔑🔑🔑🔑🔑🔑🔑🔑🔑", "password"), "🔑🔑🔑🔑…[password]");
});

Deno.test("overlapping rules give one span: the longer wins, then the more specific rule", () => {
  const key = `sk-proj-${
    randomChars("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789", 60, [
      "a",
      "B",
      "7",
    ])
  }`;
  const spans = findSecrets(`OPENAI_API_KEY=${key}`); // also a generic api_key assignment
  assert.deepEqual(spans.map((s) => [s.kind, s.rule]), [["openai key", "openai-key"]]);
  const jwt = plantedKeys().find((p) => p.kind === "jwt")!.secret;
  const bearer = findSecrets(`Authorization: Bearer ${jwt}`);
  assert.deepEqual(bearer.map((s) => s.kind), ["jwt"]); // same span as the bearer rule
  // Sorted by start, disjoint.
  const two = findSecrets(`a ${key} b password=Tr0ub4dor&3x c`);
  assert.deepEqual(two.map((s) => s.kind), ["openai key", "password"]);
  assert.ok(two[0]!.end <= two[1]!.start);
});

Deno.test("a private-key block cut before its END (a snippet) is masked to the end of its body", () => {
  const body = randomChars("ABCDEFGHabcdefgh0123456789+/", 64, ["A", "a", "0"]);
  const text = `key:\n-----BEGIN OPENSSH PRIVATE KEY-----\n${body}\n${body}`;
  const { text: masked } = maskSecrets(text);
  assert.equal(masked, "key:\n----…[private key]");
  // Escaped newlines, as in a GCP service-account JSON.
  const json =
    `{"private_key": "-----BEGIN PRIVATE KEY-----\\n${body}\\n-----END PRIVATE KEY-----\\n"}`;
  assert.ok(!maskSecrets(json).text.includes(body));
});

Deno.test("the original text is never changed: masking returns a new string", () => {
  const p = plantedKeys()[0]!;
  const original = p.line;
  maskSecrets(original);
  maskWithRanges(original, [[0, 3]]);
  assert.ok(original.includes(p.secret));
});

/** Byte range of `needle` in `text` (first occurrence). */
function rangeOf(text: string, needle: string): [number, number] {
  const at = text.indexOf(needle);
  assert.ok(at >= 0, needle);
  return [bytes(text.slice(0, at)), bytes(text.slice(0, at)) + bytes(needle)];
}

Deno.test("maskWithRanges() moves byte ranges around secrets with ASCII, accented, CJK and emoji text", () => {
  const key = plantedKeys().find((p) => p.kind === "github token")!.secret;
  const cases: [string, string][] = [
    ["see ", " fin done"],
    ["café ", " déjà vu"],
    ["東京の ", " 修复了"],
    ["🚀 ", " 👍 fine"],
  ];
  for (const [before, after] of cases) {
    const text = `${before}${key}${after}`;
    const tail = after.trim().split(" ")[0]!;
    const head = before.trim();
    const r = maskWithRanges(text, [
      rangeOf(text, head),
      rangeOf(text, key.slice(8, 14)),
      rangeOf(text, tail),
    ]);
    const masked = `${before}ghp_…[github token]${after}`;
    assert.equal(r.text, masked);
    assert.deepEqual(r.ranges, [
      rangeOf(masked, head),
      rangeOf(masked, "ghp_…[github token]"), // a range inside the secret covers its mask
      rangeOf(masked, tail), // shifted by the byte difference
    ]);
  }
});

Deno.test("maskWithRanges(): a range across a secret's edge grows to the mask; ranges merge", () => {
  const key = plantedKeys().find((p) => p.kind === "npm token")!.secret;
  const text = `token é ${key} end`;
  const masked = `token é npm_…[npm token] end`;
  const [s, e] = rangeOf(text, key);
  const r = maskWithRanges(text, [[s - 2, s + 3], [s + 5, s + 9], [e - 1, e + 2]]);
  assert.equal(r.text, masked);
  const m = rangeOf(masked, "npm_…[npm token]");
  assert.deepEqual(r.ranges, [[m[0] - 2, m[1] + 2]]);
  // A range that only touches the secret's edge does not cover it.
  const edge = maskWithRanges(text, [[s - 2, s], [e, e + 2]]);
  assert.deepEqual(edge.ranges, [[m[0] - 2, m[0]], [m[1], m[1] + 2]]);
});

Deno.test("maskWithRanges() without a secret returns the text and ranges as they were", () => {
  const r = maskWithRanges("nothing secret in 東京 🚀", [[0, 7], [18, 24]]);
  assert.deepEqual(r, { text: "nothing secret in 東京 🚀", ranges: [[0, 7], [18, 24]], spans: [] });
});
