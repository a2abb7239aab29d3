/**
 * Pi line rules: header validation and versions, the entry envelope, which message roles
 * and blocks are prose, timestamps, title cuts, and the per-reason skip counts.
 */
import assert from "node:assert/strict";
import { parseEntry, parseHeader, type PiEntry, titleFrom } from "./pi_entries.ts";

const ts = "2026-05-19T10:00:00.000Z";
const TS_MS = Date.parse(ts);

function entry(fields: Record<string, unknown>, version = 3) {
  const skipped: Record<string, number> = {};
  const e = parseEntry(
    JSON.stringify({ id: "ab12cd34", parentId: null, timestamp: ts, ...fields }),
    2,
    version,
    skipped,
  );
  return { e, skipped };
}

const msg = (message: Record<string, unknown>) =>
  entry({ type: "message", message }).e?.prose ?? null;

Deno.test("parseHeader() accepts type session with an id, defaulting the version to 1", () => {
  assert.deepEqual(
    parseHeader(
      JSON.stringify({ type: "session", version: 3, id: "u-1", timestamp: ts, cwd: "/w" }),
    ),
    {
      id: "u-1",
      version: 3,
      cwd: "/w",
      parentSession: null,
    },
  );
  assert.deepEqual(
    parseHeader(JSON.stringify({ type: "session", id: "u-1", cwd: "", parentSession: "/p.jsonl" })),
    {
      id: "u-1",
      version: 1,
      cwd: null,
      parentSession: "/p.jsonl",
    },
  );
  assert.equal(
    parseHeader(JSON.stringify({ type: "session", id: "a\u0000b" }))?.id,
    null,
    "control chars: no id",
  );
  assert.equal(parseHeader(JSON.stringify({ type: "message", id: "x" })), null);
  assert.equal(parseHeader("[1]"), null);
  assert.equal(parseHeader("{torn"), null);
});

Deno.test("user prose is the string or its text blocks; images are skipped", () => {
  assert.deepEqual(msg({ role: "user", content: "plain café", timestamp: 1 }), {
    role: "user",
    text: "plain café",
    ts_ms: TS_MS,
  });
  assert.equal(
    msg({
      role: "user",
      content: [
        { type: "text", text: "a" },
        { type: "image", data: "AAAA", mimeType: "image/png" },
        { type: "text", text: "b" },
      ],
    })
      ?.text,
    "a\nb",
  );
  assert.equal(
    msg({ role: "user", content: [{ type: "image", data: "AAAA", mimeType: "image/png" }] }),
    null,
  );
  assert.equal(msg({ role: "user", content: "  \n " }), null, "whitespace only: no record");
});

Deno.test("assistant prose is its text blocks only: never thinking, toolCall or errorMessage", () => {
  const p = msg({
    role: "assistant",
    content: [
      { type: "thinking", thinking: "secret", thinkingSignature: "sig" },
      { type: "text", text: "one" },
      { type: "toolCall", id: "t", name: "bash", arguments: { command: "ls" } },
      { type: "text", text: "" },
      { type: "text", text: "two 🎉" },
    ],
    errorMessage: "boom",
  });
  assert.deepEqual(p, { role: "assistant", text: "one\ntwo 🎉", ts_ms: TS_MS });
  assert.equal(msg({ role: "assistant", content: "a string is not Pi's assistant shape" }), null);
  assert.equal(
    msg({ role: "assistant", content: [], stopReason: "error", errorMessage: "x" }),
    null,
  );
});

Deno.test("tool results, bash, custom and summary roles and non-message entries are never prose", () => {
  for (
    const role of [
      "toolResult",
      "bashExecution",
      "custom",
      "hookMessage",
      "branchSummary",
      "compactionSummary",
    ]
  ) {
    assert.equal(
      msg({ role, content: [{ type: "text", text: "x" }], output: "x", summary: "x" }),
      null,
      role,
    );
  }
  for (
    const type of [
      "compaction",
      "branch_summary",
      "custom",
      "custom_message",
      "label",
      "model_change",
      "thinking_level_change",
    ]
  ) {
    const { e } = entry({ type, summary: "x", content: "x", label: "x", data: "x" });
    assert.ok(e && e.prose === null && e.name === null, type);
  }
  assert.equal(entry({ type: "session_info", name: "My title" }).e?.name, "My title");
  assert.equal(
    entry({ type: "session_info", name: "  " }).e?.name,
    null,
    "an empty name never wins",
  );
});

Deno.test('the envelope: ids required, parentId null/""/missing is a root, timestamps fall back', () => {
  const base = { type: "message", message: { role: "user", content: "x", timestamp: 1234 } };
  assert.equal(entry({ ...base, parentId: "" }).e?.parentId, null);
  assert.equal(entry({ ...base, parentId: undefined }).e?.parentId, null);
  assert.equal(entry({ ...base, parentId: "ff00ff00" }).e?.parentId, "ff00ff00");
  assert.deepEqual(entry({ ...base, parentId: 7 }).skipped, { malformed_entry: 1 });
  assert.deepEqual(entry({ ...base, id: undefined }).skipped, { malformed_entry: 1 });
  assert.deepEqual(entry({ ...base, id: undefined }, 1).skipped, { v1_entry_without_id: 1 });
  assert.deepEqual(entry({ ...base, type: "session" }).skipped, { extra_header: 1 });
  assert.equal(entry({ ...base, timestamp: "garbage" }).e?.prose?.ts_ms, 1234);
  const none = entry({ ...base, timestamp: undefined, message: { role: "user", content: "x" } });
  assert.ok(none.e && none.e.prose === null, "the entry stays in the tree");
  assert.deepEqual(none.skipped, { bad_timestamp: 1 });
  const skipped: Record<string, number> = {};
  const blank: PiEntry | null = parseEntry("   ", 3, 3, skipped);
  assert.equal(blank, null);
  assert.deepEqual(skipped, {}, "blank lines are not counted (Pi skips them too)");
  parseEntry("{nope", 3, 3, skipped);
  parseEntry('"str"', 3, 3, skipped);
  assert.deepEqual(skipped, { malformed_line: 2 });
});

Deno.test("titleFrom() collapses whitespace and cuts at 100 code points, never mid-emoji", () => {
  assert.equal(titleFrom("  fix\n\tthe  café  "), "fix the café");
  const long = "🍪".repeat(150);
  assert.equal(titleFrom(long), "🍪".repeat(100));
  assert.equal(titleFrom("cafe\u0301"), "cafe\u0301", "never normalised");
});
