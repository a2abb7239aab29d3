import assert from "node:assert/strict";
import {
  capText,
  deriveActive,
  type MessageRecord,
  RECORD_TEXT_CAP_BYTES,
  type SupersessionMark,
} from "./record.ts";
import { decodeLocator, encodeLocator, hash16Of, type Locator } from "./locator.ts";

function rec(order: number, extra: Partial<MessageRecord> = {}): MessageRecord {
  return {
    id: `r${order}`,
    source: "codex",
    session_id: "s",
    role: "user",
    ts_ms: order,
    text: `t${order}`,
    truncated: false,
    locator: {
      v: 1,
      kind: "external_line",
      file: "f",
      generation: 0,
      line: order + 1,
      hash: "0".repeat(16),
    },
    order,
    generation: 0,
    subagent: false,
    ...extra,
  };
}

Deno.test("seq_cut supersedes records with higher seq written before the cut, not after", () => {
  const rs = [rec(0, { seq: 1 }), rec(1, { seq: 2 }), rec(2, { seq: 3 }), rec(3, { seq: 4 })];
  const marks: SupersessionMark[] = [{ kind: "seq_cut", after_order: 3, cut_after_seq: 1 }];
  assert.deepEqual(deriveActive(rs, marks), [true, false, false, true]);
});

Deno.test("turn_count drops the last N active user turns and rollbacks stack", () => {
  const rs = [0, 0, 1, 1, 2, 2, 3].map((t, i) => rec(i, { user_turn: t }));
  const one: SupersessionMark = { kind: "turn_count", after_order: 7, num_turns: 1, generation: 0 };
  assert.deepEqual(deriveActive(rs, [one]), [true, true, true, true, true, true, false]);
  const stacked: SupersessionMark = {
    kind: "turn_count",
    after_order: 7,
    num_turns: 2,
    generation: 0,
  };
  assert.deepEqual(deriveActive(rs, [one, stacked]), [
    true,
    true,
    false,
    false,
    false,
    false,
    false,
  ]);
});

Deno.test("item_anchor supersedes what follows the anchor; an unknown anchor fails safe to active", () => {
  const rs = [rec(0, { item_id: "a" }), rec(1, { item_id: "b" }), rec(2, { item_id: "c" })];
  assert.deepEqual(
    deriveActive(rs, [{ kind: "item_anchor", after_order: 3, item_id: "a", generation: 0 }]),
    [true, false, false],
  );
  assert.deepEqual(
    deriveActive(rs, [{ kind: "item_anchor", after_order: 3, item_id: "zz", generation: 0 }]),
    [true, true, true],
  );
});

Deno.test("generation_restore activates only the named generation and can reactivate", () => {
  const rs = [rec(0, { generation: 0 }), rec(1, { generation: 1 }), rec(2, { generation: 2 })];
  const marks: SupersessionMark[] = [
    { kind: "generation_restore", after_order: 2, active_generation: 1 },
    { kind: "generation_restore", after_order: 3, active_generation: 0 },
  ];
  assert.deepEqual(deriveActive(rs, marks.slice(0, 1)), [false, true, true]);
  assert.deepEqual(deriveActive(rs, marks), [true, false, false]);
});

Deno.test("record_ids supersedes exactly the named records; input order does not matter", () => {
  const rs = [rec(2), rec(0), rec(1)];
  assert.deepEqual(deriveActive(rs, [{ kind: "record_ids", after_order: 3, ids: ["r0", "r2"] }]), [
    false,
    false,
    true,
  ]);
  assert.deepEqual(deriveActive(rs, []), [true, true, true]);
});

Deno.test("capText cuts on a character boundary at 256 KiB", () => {
  const big = "é".repeat(RECORD_TEXT_CAP_BYTES);
  const c = capText(big);
  assert.equal(c.truncated, true);
  assert.equal(new TextEncoder().encode(c.text).length, RECORD_TEXT_CAP_BYTES);
  const odd = "a" + "😀".repeat(RECORD_TEXT_CAP_BYTES / 4);
  const d = capText(odd);
  assert.ok(new TextEncoder().encode(d.text).length <= RECORD_TEXT_CAP_BYTES);
  assert.ok(!d.text.endsWith("\ufffd"));
  assert.deepEqual(capText("short"), { text: "short", truncated: false });
});

Deno.test("locators round-trip as JSON and base64url; malformed values decode to null", () => {
  const loc: Locator = {
    v: 1,
    kind: "native_sidecar_span",
    file: "turns/turn_001_model.txt",
    offset: 3,
    len: 9,
    line: 7,
    hash: hash16Of("x"),
  };
  assert.deepEqual(decodeLocator(encodeLocator(loc)), loc);
  assert.deepEqual(decodeLocator(JSON.stringify(loc)), loc);
  for (
    const bad of [
      "",
      "%%%",
      "e30",
      "{",
      JSON.stringify({ ...loc, v: 2 }),
      JSON.stringify({ ...loc, extra: 1 }),
      "x".repeat(5000),
    ]
  ) {
    assert.equal(decodeLocator(bad), null, bad.slice(0, 40));
  }
});
