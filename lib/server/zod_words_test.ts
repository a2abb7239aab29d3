import assert from "node:assert/strict";
import { ZodError } from "zod";
import { mapError } from "./errors_map.ts";
import { DetailParams, MessageSearchParams, parseQuery } from "./params.ts";

/** The 400 message a request's parameters get. */
function refusal(schema: typeof MessageSearchParams | typeof DetailParams, qs: string): string {
  try {
    parseQuery(schema, new URL(`http://h/x?${qs}`));
  } catch (err) {
    assert.ok(err instanceof ZodError);
    const m = mapError(err);
    assert.equal(m.status, 400);
    return String(m.body.message);
  }
  throw new Error(`accepted: ${qs}`);
}

Deno.test("a refused parameter says what is wrong and what to do, never zod's internals", () => {
  const cases: [string, RegExp][] = [
    [
      `q=${"x".repeat(1001)}`,
      /^Invalid parameter "q": is too long: at most 1000 characters; shorten it$/,
    ],
    ["q=", /^Invalid parameter "q": is empty: give a value$/],
    ["q=ok&source=nope", /^Invalid parameter "source\.0": must be one of intendant, codex, /],
    ["q=ok&limit=abc", /^Invalid parameter "limit": must be a whole number from 1 to 100$/],
    ["q=ok&limit=500", /^Invalid parameter "limit": must be a whole number from 1 to 100$/],
    ["q=ok&since=yesterday", /^Invalid parameter "since": must be a date: epoch milliseconds/],
    ["q=ok&bogus=1", /^Invalid request: has unknown fields: bogus$/],
  ];
  for (const [qs, re] of cases) {
    const msg = refusal(MessageSearchParams, qs);
    assert.match(msg, re, qs);
    assert.doesNotMatch(msg, /Too big|Too small|expected string to have|Invalid option/, qs);
    if (qs.startsWith("q=x")) assert.ok(!msg.includes("xxxx"), "the query is never reflected");
  }
});
