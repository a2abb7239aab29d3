import assert from "node:assert/strict";
import { lineText, parseJsonLines, splitCompleteLines } from "./lines.ts";

const enc = (s: string) => new TextEncoder().encode(s);

Deno.test("splitCompleteLines yields only newline-terminated lines and the consumed offset", () => {
  const b = enc('{"a":1}\n{"b":2}\r\n{"torn":');
  const r = splitCompleteLines(b, 100, 5);
  assert.equal(r.lines.length, 2);
  assert.equal(r.consumedOffset, 100 + 17);
  assert.equal(lineText(b, r.lines[1]!, 100), '{"b":2}');
  assert.deepEqual(r.lines.map((l) => l.lineNo), [5, 6]);
});

Deno.test("a torn multibyte UTF-8 tail is never consumed", () => {
  const full = enc("héllo wörld ✓\n");
  for (let cut = 0; cut < full.length; cut++) {
    const r = splitCompleteLines(full.subarray(0, cut));
    assert.equal(r.lines.length, 0);
    assert.equal(r.consumedOffset, 0);
  }
  assert.equal(lineText(full, splitCompleteLines(full).lines[0]!), "héllo wörld ✓");
});

Deno.test("parseJsonLines reports bad lines by number instead of throwing", () => {
  const r = parseJsonLines(enc('{"ok":1}\nnot json\n\n{"ok":2}\n'));
  assert.deepEqual(r.values.map((v) => v.value), [{ ok: 1 }, { ok: 2 }]);
  assert.deepEqual(r.bad, [2]);
});
