import assert from "node:assert/strict";
import { READ_REFUSALS } from "../../lib/durable/contained_open.ts";
import { activityLine, fileReasonText } from "./activity_text.ts";

Deno.test("activityLine() says nothing when every tool call is there", () => {
  assert.equal(activityLine(undefined), null);
  assert.equal(activityLine(null), null);
  assert.equal(
    activityLine({ state: "ok", files: [{ file: "a.jsonl", state: "ok" }], skipped: {} }),
    null,
  );
});

Deno.test("activityLine() names why no tool call is shown (a database source)", () => {
  const reason = "This source keeps its tool calls in database rows, which the detail does " +
    "not read yet: its prose is shown without them";
  const l = activityLine({ state: "unavailable", reason, files: [], skipped: {} })!;
  assert.equal(l.state, "unavailable");
  assert.equal(
    l.text,
    "Tool calls are not shown: this source keeps its tool calls in database rows, which the " +
      "detail does not read yet: its prose is shown without them",
  );
  assert.deepEqual(l.files, []);
});

Deno.test("activityLine() lists the files not read whole with their reasons in words", () => {
  const l = activityLine({
    state: "partial",
    reason: "1 of 2 source files not read whole (hardlinked)",
    files: [
      { file: "projects/p/s1.jsonl", state: "ok" },
      { file: "projects/p/s1/subagents/agent-a.jsonl", state: "unavailable", reason: "hardlinked" },
    ],
    skipped: {},
  })!;
  assert.equal(
    l.text,
    "Some tool calls could not be read: 1 of 2 source files not read whole (hardlinked)",
  );
  assert.deepEqual(l.files, [{
    file: "projects/p/s1/subagents/agent-a.jsonl",
    why: "a hard link (never read: it may name a file elsewhere)",
    code: "hardlinked",
  }]);
});

Deno.test("fileReasonText() keeps an unknown code readable and an error's detail", () => {
  assert.equal(fileReasonText("symlink"), "a symbolic link (not followed)");
  assert.equal(fileReasonText("read_error: PermissionDenied"), "read error (PermissionDenied)");
  assert.equal(fileReasonText("brand_new_code"), "brand new code");
  assert.equal(fileReasonText(undefined), "not read whole");
});

Deno.test("fileReasonText() has words for every refusal of the contained reader", () => {
  for (const code of READ_REFUSALS) {
    const text = fileReasonText(code);
    assert.notEqual(text, code.replaceAll("_", " "), `${code} has a phrase of its own`);
  }
});

Deno.test("activityLine() says the tool calls came from the vault when its agent deleted the files", () => {
  const whole = activityLine({
    state: "ok",
    files: [{ file: "a.jsonl", state: "ok" }],
    skipped: {},
    from: "vault",
  });
  assert.equal(whole?.state, "vault");
  assert.match(whole!.text, /^From the vault: its agent deleted the files/);
  const part = activityLine({
    state: "partial",
    reason: "1 of 2 source files not read whole (not_in_vault)",
    files: [{ file: "a.jsonl", state: "ok" }, {
      file: "b.jsonl",
      state: "unavailable",
      reason: "not_in_vault",
    }],
    skipped: {},
    from: "vault",
  });
  assert.equal(part?.state, "partial");
  assert.deepEqual(part!.files.map((f) => f.why), [
    "deleted by its agent and not kept in the vault",
  ]);
});
