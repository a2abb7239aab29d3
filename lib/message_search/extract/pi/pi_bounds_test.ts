/**
 * Pi extractor bounds: a file over the byte bound, a line over the line bound, or more
 * entries than the entry bound is published EMPTY (fail-closed, counted, reason kept in
 * state), on a first read and on an append alike; an unchanged failed file is not re-read;
 * long prose is capped on a character boundary.
 */
import assert from "node:assert/strict";
import { RECORD_TEXT_CAP_BYTES } from "../../record.ts";
import { createPiExtractor } from "./pi.ts";
import { liveSession, Shard, unitOf, withDir } from "./testing/pi_test_helpers.ts";
import type { PiState } from "./pi_tree.ts";

Deno.test("createPiExtractor() rejects a limit that is not a positive integer", () => {
  assert.throws(
    () => createPiExtractor({ agentDirs: [] }, { limits: { maxEntries: 0 } }),
    RangeError,
  );
  assert.throws(
    () => createPiExtractor({ agentDirs: [] }, { limits: { maxLineBytes: 1.5 } }),
    /"maxLineBytes"/,
  );
});

const now = () => ({ now: Date.now() });
const append = (path: string, s: string) => Deno.writeTextFile(path, s, { append: true });

Deno.test("a file over maxFileBytes publishes nothing, and is not re-read while unchanged", async () => {
  await withDir(async (dir) => {
    const { path } = await liveSession(dir, 3);
    const size = (await Deno.stat(path)).size;
    const ex = createPiExtractor({ agentDirs: [dir] }, { limits: { maxFileBytes: size - 1 } });
    const unit = await unitOf(dir);
    const o = await ex.extract(unit, null, now());
    assert.ok(o.kind === "replace");
    assert.deepEqual([o.records, o.marks, o.skipped], [[], [], { file_too_large: 1 }]);
    assert.equal((o.state as PiState).failed, "file_too_large");
    const shard = new Shard().apply(o);
    assert.equal((await ex.extract(unit, shard.prior, now())).kind, "unchanged");
  });
});

Deno.test("a shard that grows past maxFileBytes is replaced empty, never partially", async () => {
  await withDir(async (dir) => {
    const { w, path } = await liveSession(dir, 2);
    const size = (await Deno.stat(path)).size;
    const ex = createPiExtractor({ agentDirs: [dir] }, { limits: { maxFileBytes: size + 50 } });
    const unit = await unitOf(dir);
    const shard = new Shard().apply(await ex.extract(unit, null, now()));
    assert.equal(shard.records.length, 4);
    const from = w.lines.length;
    w.user("x".repeat(200));
    await append(path, w.lines.slice(from).join("\n") + "\n");
    const o = await ex.extract(unit, shard.prior, now());
    assert.ok(o.kind === "replace" && o.records.length === 0 && o.skipped.file_too_large === 1);
    assert.equal(o.cursors[path]!.rewrite_epoch, 1, "a lower watermark comes with a new epoch");
  });
});

Deno.test("a line over maxLineBytes fails the whole file closed, first read or append", async () => {
  await withDir(async (dir) => {
    const { w, path } = await liveSession(dir, 1);
    const ex = createPiExtractor({ agentDirs: [dir] }, { limits: { maxLineBytes: 4096 } });
    const unit = await unitOf(dir);
    const shard = new Shard().apply(await ex.extract(unit, null, now()));
    assert.equal(shard.records.length, 2);
    const from = w.lines.length;
    w.entry("message", {
      message: {
        role: "toolResult",
        toolCallId: "t1",
        toolName: "read",
        content: [{ type: "text", text: "y".repeat(5000) }],
        isError: false,
        timestamp: 1,
      },
    });
    w.user("after the big tool result");
    await append(path, w.lines.slice(from).join("\n") + "\n");
    const o = await ex.extract(unit, shard.prior, now());
    assert.ok(o.kind === "replace" && o.records.length === 0 && o.skipped.oversized_line === 1);
    const fresh = await ex.extract(unit, null, now());
    assert.ok(
      fresh.kind === "replace" && fresh.records.length === 0 && fresh.skipped.oversized_line === 1,
    );
  });
});

Deno.test("more entries than maxEntries fail closed, on a full parse and on an append", async () => {
  await withDir(async (dir) => {
    const { w, path } = await liveSession(dir, 2);
    const over = createPiExtractor({ agentDirs: [dir] }, { limits: { maxEntries: 3 } });
    const unit = await unitOf(dir);
    const o = await over.extract(unit, null, now());
    assert.ok(o.kind === "replace" && o.records.length === 0 && o.skipped.too_many_entries === 1);
    const exact = createPiExtractor({ agentDirs: [dir] }, { limits: { maxEntries: 4 } });
    const shard = new Shard().apply(await exact.extract(unit, null, now()));
    assert.equal(shard.records.length, 4);
    const from = w.lines.length;
    w.user("one too many");
    await append(path, w.lines.slice(from).join("\n") + "\n");
    const o2 = await exact.extract(unit, shard.prior, now());
    assert.ok(
      o2.kind === "replace" && o2.records.length === 0 && o2.skipped.too_many_entries === 1,
    );
  });
});

Deno.test("a failed file only moves its cursor on appends; a re-derivation parses it again", async () => {
  await withDir(async (dir) => {
    const { w, path } = await liveSession(dir, 1);
    const unit = await unitOf(dir);
    const tight = createPiExtractor({ agentDirs: [dir] }, { limits: { maxEntries: 1 } });
    const shard = new Shard().apply(await tight.extract(unit, null, now()));
    const from = w.lines.length;
    w.user("more");
    await append(path, w.lines.slice(from).join("\n") + "\n");
    const o = await tight.extract(unit, shard.prior, now());
    assert.ok(o.kind === "append", "no re-read, no re-publish");
    assert.deepEqual([o.records, o.marks, o.skipped], [[], [], {}]);
    assert.equal((o.state as PiState).failed, "too_many_entries");
    assert.equal(o.cursors[path]!.size, (await Deno.stat(path)).size);
    shard.apply(o);
    assert.equal((await tight.extract(unit, shard.prior, now())).kind, "unchanged");
    // Roomier bounds (a parser-version bump re-derives: prior null) recover everything.
    const roomy = createPiExtractor({ agentDirs: [dir] });
    const r = await roomy.extract(unit, null, now());
    assert.ok(r.kind === "replace" && r.records.length === 3);
    // A rewrite of a failed file is parsed again, not stub-advanced.
    await Deno.writeTextFile(path, w.lines.slice(0, 3).join("\n") + "\n");
    const rw = await roomy.extract(unit, shard.prior, now());
    assert.ok(rw.kind === "replace" && rw.records.length === 2);
  });
});

Deno.test("prose over 256 KiB is capped on a character boundary and flagged", async () => {
  await withDir(async (dir) => {
    const { w, path } = await liveSession(dir, 0);
    const big = "é".repeat(RECORD_TEXT_CAP_BYTES); // 2 bytes each: twice the cap
    w.user(big);
    w.assistant([{ type: "text", text: "ok" }]);
    await Deno.writeTextFile(path, w.text());
    const o = await createPiExtractor({ agentDirs: [dir] }).extract(await unitOf(dir), null, now());
    assert.ok(o.kind === "replace");
    const r = o.records[0]!;
    assert.equal(r.truncated, true);
    assert.equal(new TextEncoder().encode(r.text).length, RECORD_TEXT_CAP_BYTES);
    assert.ok(big.startsWith(r.text));
  });
});
