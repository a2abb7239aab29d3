import assert from "node:assert/strict";
import { join } from "node:path";
import { Conversation } from "./conversation.ts";
import { contentHash16 } from "./message.ts";
import { withTempDir } from "../../tests/helpers/temp.ts";

Deno.test("seqs are monotonic, persisted line by line, and never reused after truncation", () =>
  withTempDir(async (dir) => {
    const c = new Conversation();
    for (const t of ["a", "b", "c"]) {
      c.append({ role: "user", content: t, provenance: "task" }, dir);
    }
    assert.equal(c.truncateAfter(1), 2);
    await c.save(dir);
    const { conversation: back } = await Conversation.load(dir);
    assert.deepEqual(back.messages.map((m) => m.seq), [1]);
    assert.equal(back.nextSeq, 4);
    assert.equal(
      back.append({ role: "assistant", content: "d", provenance: "assistant" }, dir).seq,
      4,
    );
    const again = (await Conversation.load(dir)).conversation;
    assert.deepEqual(again.messages.map((m) => [m.seq, m.content]), [[1, "a"], [4, "d"]]);
  }));

Deno.test("load skips a torn tail and reports malformed lines without losing the rest", () =>
  withTempDir(async (dir) => {
    Deno.writeTextFileSync(
      join(dir, "conversation.jsonl"),
      '{"seq":1,"role":"user","content":"x","provenance":"task"}\nnot json\n{"seq":2,"role":"bogus","content":"y"}\n{"seq":3,"role":"assistant","content":"z","provenance":"assistant"}\n{"seq":4,"ro',
    );
    const { conversation, report } = await Conversation.load(dir);
    assert.deepEqual(conversation.messages.map((m) => m.seq), [1, 3]);
    assert.deepEqual(report.malformedLines, [2, 3]);
    assert.equal(report.tornTailBytes, 12);
  }));

Deno.test("ensureSeqsAssigned renumbers only legacy files and returns the epoch mapping", () =>
  withTempDir(async (dir) => {
    Deno.writeTextFileSync(
      join(dir, "conversation.jsonl"),
      '{"role":"user","content":"hi"}\n{"role":"assistant","content":"yo"}\n',
    );
    const { conversation } = await Conversation.load(dir);
    assert.deepEqual(conversation.ensureSeqsAssigned(), [[1, "user", contentHash16("hi")], [
      2,
      "assistant",
      contentHash16("yo"),
    ]]);
    assert.equal(conversation.nextSeq, 3);
    assert.equal(conversation.ensureSeqsAssigned(), null);
    const fresh = new Conversation();
    fresh.append({ role: "user", content: "x", provenance: "task" });
    assert.equal(fresh.ensureSeqsAssigned(), null);
  }));

Deno.test("the windowed view keeps the task and the newest messages that fit", () => {
  const c = new Conversation({ contextWindow: 10 });
  c.append({ role: "user", content: "task", provenance: "task" });
  for (let i = 0; i < 10; i++) {
    c.append({ role: "assistant", content: `msg ${i} ....`, provenance: "assistant" });
  }
  const w = c.windowed();
  assert.equal(w[0]!.content, "task");
  assert.equal(w.at(-1)!.content, "msg 9 ....");
  assert.ok(w.length < c.messages.length);
  assert.equal(new Conversation().windowed().length, 0);
});
