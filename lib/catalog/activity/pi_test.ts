import assert from "node:assert/strict";
import { PiSessionWriter } from "../../../tests/fixtures/pi_fixture.ts";
import { piActivity } from "./pi.ts";

Deno.test("piActivity pairs toolCall blocks with toolResult entries and reads bashExecution and summaries", () => {
  let t = Date.parse("2026-05-18T10:00:00Z");
  const w = new PiSessionWriter("9e1f0000-0000-4000-8000-000000000001", () => (t += 1000), {
    timestamp: new Date(t).toISOString(),
    cwd: "/w",
  });
  const u = w.user("go");
  const a = w.assistant([{ type: "text", text: "Trying." }, {
    type: "toolCall",
    id: "c1",
    name: "bash",
    arguments: { command: "make" },
  }, { type: "toolCall", id: "c2", name: "edit", arguments: { path: "a" } }]);
  const res = (id: string, text: string, isError: boolean) =>
    w.entry("message", {
      message: {
        role: "toolResult",
        toolCallId: id,
        toolName: "x",
        content: [{ type: "text", text }],
        isError,
      },
    });
  res("c1", "boom\n\nCommand exited with code 2", true);
  res("c2", "edited", false);
  w.entry("message", {
    message: {
      role: "bashExecution",
      command: "rm x",
      output: "rm: x: busy",
      exitCode: null,
      cancelled: true,
      truncated: true,
    },
  });
  const bs = w.entry("branch_summary", { fromId: a, summary: "tried things" }, a);
  w.entry("compaction", { summary: "so far", firstKeptEntryId: u, tokensBefore: 10 });
  const act = piActivity(new TextEncoder().encode(w.text()));
  const calls = act.items.flatMap((
    i,
  ) => (i.kind === "call" ? [{ ...i.call, by: i.by, pos: i.pos }] : []));
  assert.deepEqual(calls.map((c) => [c.by, c.name, c.input, c.status, c.exit_code, c.pos.part]), [
    ["agent", "bash", "make", "error", 2, 2],
    ["agent", "edit", '{"path":"a"}', "ok", undefined, 3],
    ["user", "bash", "rm x", "error", undefined, 0],
  ]);
  assert.equal(calls[2]!.output.output!.truncated, true, "Pi cut the output itself");
  const snaps = act.items.flatMap((i) => (i.kind === "snapshot" ? [i] : []));
  assert.deepEqual(snaps.map((s) => [s.detail.kind, s.row]), [["branch_summary", bs], [
    "compaction",
    snaps[1]!.row,
  ]]);
  assert.equal(snaps[1]!.detail.first_kept_entry_id, u);
  assert.equal(act.parents.get(bs), a);
  assert.equal(act.ids.get(a), 3);
  assert.equal(act.items.filter((i) => i.kind === "turn").length, 1);
});
