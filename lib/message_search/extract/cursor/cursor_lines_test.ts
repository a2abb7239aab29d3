import assert from "node:assert/strict";
import { parseCursorLine, parseCursorTxt, userProse } from "./cursor_lines.ts";

const enc = (v: unknown) => new TextEncoder().encode(JSON.stringify(v));

Deno.test("cursor lines: <user_query> inner text only; context-only user text is not prose", () => {
  assert.equal(
    userProse("<attached_files>\nx\n</attached_files>\n<user_query>\n Why? \n</user_query>"),
    "Why?",
  );
  assert.equal(userProse("<user_query>a</user_query><user_query>b</user_query>"), "a\nb");
  assert.equal(userProse("<environment_info>os</environment_info>"), null);
  assert.equal(userProse("plain typed text"), "plain typed text");
  assert.equal(userProse("<user_query>  </user_query>"), null);
});

Deno.test("cursor lines: text blocks only; tool_result-only, thinking, control lines are not prose", () => {
  assert.deepEqual(
    parseCursorLine(enc({
      role: "assistant",
      message: {
        content: [{ type: "thinking", thinking: "t" }, { type: "text", text: "A" }, {
          type: "tool_use",
        }],
      },
    })),
    { kind: "prose", role: "assistant", text: "A" },
  );
  assert.deepEqual(
    parseCursorLine(enc({ role: "user", message: { content: [{ type: "tool_result" }] } })),
    {
      kind: "other",
    },
  );
  assert.deepEqual(parseCursorLine(enc({ type: "turn_ended" })), { kind: "other" });
  assert.deepEqual(
    parseCursorLine(enc({ role: "user", message: { content: "<user_query>s</user_query>" } })),
    {
      kind: "prose",
      role: "user",
      text: "s",
    },
  );
  assert.deepEqual(
    parseCursorLine(enc({ role: "user", message: { content: [{ type: "text", text: 1 }] } })),
    {
      kind: "skip",
      reason: "malformed_record",
    },
  );
  assert.deepEqual(parseCursorLine(enc([1])), { kind: "skip", reason: "malformed_record" });
});

Deno.test("cursor lines: legacy .txt blocks skip thinking, tool calls and results", () => {
  const txt = [
    "user:",
    "<user_query>",
    "Why?",
    "</user_query>",
    "",
    "assistant:",
    "[Thinking] hmm",
    "  deep thought",
    "Because.",
    "[Tool call] Read",
    "  path=x",
    "[Tool result] Read",
    "  body",
    "",
    "Done.",
  ];
  assert.deepEqual(parseCursorTxt(txt), [
    { line: 1, role: "user", text: "Why?" },
    { line: 6, role: "assistant", text: "Because.\nDone." },
  ]);
});
