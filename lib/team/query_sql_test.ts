/**
 * The pure SQL pieces of team search: LIKE escaping, the boundary-rule class (checked
 * code point by code point against the local engine's continuesCharacter), the ARE
 * escaping of needles, the trigram test that picks a plan, and that values only ever
 * travel as parameters.
 */
import assert from "node:assert/strict";
import { continuesCharacter } from "../message_search/query/match.ts";
import {
  boundaryRegex,
  continuationClass,
  hasTrigram,
  likeContains,
  recordConditions,
  SqlParams,
} from "./query_sql.ts";

Deno.test("likeContains escapes \\ % _ so a needle is a literal substring", () => {
  assert.equal(likeContains("50%_off\\x"), "%50\\%\\_off\\\\x%");
  assert.equal(likeContains("plain"), "%plain%");
  // Mirror of PostgreSQL LIKE with escape "\" in JS: the pattern matches only the literal.
  const toRe = (p: string) =>
    new RegExp(
      "^" + p.replace(/\\(.)|%|_|[.*+?^${}()|[\]]/g, (m, esc) =>
        esc !== undefined
          ? esc.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")
          : m === "%"
          ? ".*"
          : m === "_"
          ? "."
          : `\\${m}`) +
        "$",
      "s",
    );
  assert.ok(toRe(likeContains("50%_off\\x")).test("xx 50%_off\\x yy"));
  assert.ok(!toRe(likeContains("50%_off\\x")).test("50abcoff\\x"));
  assert.ok(!toRe(likeContains("50%_off\\x")).test("50%_offx"));
});

Deno.test("the continuation class is exactly the local boundary rule's units", () => {
  const cls = new RegExp(`^${continuationClass()}$`, "u");
  for (let cp = 0; cp <= 0x10ffff; cp++) {
    if (cp >= 0xd800 && cp <= 0xdfff) continue;
    const s = String.fromCodePoint(cp);
    if (cls.test(s) !== continuesCharacter(s, 0)) {
      assert.fail(`U+${cp.toString(16)}: class ${cls.test(s)}, local ${continuesCharacter(s, 0)}`);
    }
  }
});

Deno.test("boundaryRegex matches the needle literally and not before a mark or jamo", () => {
  const re = (n: string) => new RegExp(boundaryRegex(n), "u");
  assert.ok(re("cafe").test("cafe au lait"));
  assert.ok(!re("cafe").test("cafe\u0301"));
  assert.ok(re("cafe").test("cafe\u0301 and cafe"));
  assert.ok(!re("우가").test("우가\u11a8"));
  assert.ok(re("a.b(c)[d]{2}|^$*+?\\").test("x a.b(c)[d]{2}|^$*+?\\ y"));
  assert.ok(!re("a.b").test("axb"));
});

Deno.test("hasTrigram: three word characters in a row", () => {
  assert.deepEqual(
    ["the", "ok", "中文", "日本語", "%_", "a.b", "50%_off\\x", "café"].map(hasTrigram),
    [true, false, false, true, false, false, true, true],
  );
});

Deno.test("recordConditions binds every value as a parameter", () => {
  const p = new SqlParams();
  const text = recordConditions({
    needles: ["o'reilly; drop", "café"],
    roleMask: 2,
    sources: new Set(["codex"]),
    machines: ["a"],
    from: 5,
    to: 9,
    includeSuperseded: false,
    project: "/p'\u0000",
    asOf: { machines: ["a'--", "b"], revs: [3, 4] },
  }, p);
  assert.ok(!text.includes("reilly") && !text.includes("codex") && !text.includes("/p"));
  assert.ok(!text.includes("a'--"), "machine names of the as-of vector are parameters");
  assert.match(text, /r\.rev_added <= CASE r\.machine WHEN \$1 THEN \$2::bigint WHEN \$3/);
  assert.ok(text.includes("NOT r.superseded") && text.includes("r.role = $"));
  assert.ok(p.values.includes("%/p'\uFFFD%"), "U+0000 in a project travels as U+FFFD");
  assert.deepEqual(p.values.slice(0, 4), ["a'--", 3, "b", 4]);
});
