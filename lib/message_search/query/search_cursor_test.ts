import assert from "node:assert/strict";
import { createHmac } from "node:crypto";
import { InvalidCursorError } from "./errors.ts";
import { CURSOR_MAX_CHARS, fingerprintOf, mintCursor, openCursor } from "./search_cursor.ts";

const KEY = new Uint8Array(32).map((_, i) => i * 7 + 1);
const STATE = {
  fp: "0123456789abcdef",
  rev: 1_795_975_278_504,
  pos: { best: 1_795_975_260_504, key: "codex:019e-ä" },
  seen: 40,
};

Deno.test("a minted cursor opens to exactly what it pinned", () => {
  const c = mintCursor(KEY, STATE);
  assert.match(c, /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/);
  assert.deepEqual(openCursor(KEY, c), STATE);
  const start = { fp: "f", rev: 0, pos: null, seen: null };
  assert.deepEqual(openCursor(KEY, mintCursor(KEY, start)), start);
});

Deno.test("forged, truncated, oversized and foreign-key cursors are InvalidCursorError", () => {
  const c = mintCursor(KEY, STATE);
  const [payload, sig] = c.split(".") as [string, string];
  const forgedPayload = btoa(JSON.stringify([1, STATE.fp, STATE.rev, 0, "codex:other"]))
    .replaceAll("+", "-").replaceAll("/", "_").replace(/=+$/, "");
  const flip = (s: string, i: number) =>
    s.slice(0, i) + (s[i] === "A" ? "B" : "A") + s.slice(i + 1);
  const bad = [
    "",
    payload,
    `${payload}.`,
    `.${sig}`,
    c.slice(0, -1),
    c.slice(1),
    `${flip(payload, 3)}.${sig}`,
    `${payload}.${flip(sig, 5)}`,
    `${forgedPayload}.${sig}`,
    `${payload}.${sig}.x`,
    `${payload}.${sig}==`,
    "x".repeat(CURSOR_MAX_CHARS + 1),
    `${payload}.${sig}${"A".repeat(CURSOR_MAX_CHARS)}`,
    mintCursor(new Uint8Array(32), STATE),
  ];
  for (const b of bad) {
    assert.throws(() => openCursor(KEY, b), InvalidCursorError, JSON.stringify(b.slice(0, 40)));
  }
});

Deno.test("fingerprints are keyed: equal per key and identity, unrelated across keys", () => {
  const id = JSON.stringify([1, ["login bug"], null, null, null, null, null, false, 20]);
  assert.equal(fingerprintOf(KEY, id), fingerprintOf(KEY, id));
  assert.notEqual(fingerprintOf(KEY, id), fingerprintOf(new Uint8Array(32), id));
  assert.notEqual(fingerprintOf(KEY, id), fingerprintOf(KEY, id.replace("20", "21")));
  assert.ok(!fingerprintOf(KEY, id).includes("login"));
  assert.match(fingerprintOf(KEY, id), /^[A-Za-z0-9_-]{22}$/);
});

Deno.test("a version-1 cursor (no count of groups shown) still opens, with seen null", () => {
  const payload = btoa(JSON.stringify([1, STATE.fp, STATE.rev, STATE.pos.best, "codex:x"]))
    .replaceAll("+", "-").replaceAll("/", "_").replace(/=+$/, "");
  const sig = mintCursor(KEY, STATE).split(".")[1]!;
  // Re-sign the v1 payload the way mintCursor signs: forge a valid v1 cursor via the MAC.
  const v1 = `${payload}.${resign(payload)}`;
  assert.notEqual(sig, resign(payload));
  assert.deepEqual(openCursor(KEY, v1), {
    fp: STATE.fp,
    rev: STATE.rev,
    pos: { best: STATE.pos.best, key: "codex:x" },
    seen: null,
  });
  // A negative or fractional count is refused like any other malformed payload.
  for (const seen of [-1, 1.5, "3"]) {
    const p = btoa(JSON.stringify([2, STATE.fp, STATE.rev, null, null, seen]))
      .replaceAll("+", "-").replaceAll("/", "_").replace(/=+$/, "");
    assert.throws(() => openCursor(KEY, `${p}.${resign(p)}`), InvalidCursorError);
  }
});

/** The MAC mintCursor puts on `payload` (HMAC-SHA256 with KEY, base64url). */
function resign(payload: string): string {
  const mac = createHmac("sha256", KEY).update(payload).digest("base64");
  return mac.replaceAll("+", "-").replaceAll("/", "_").replace(/=+$/, "");
}
