import assert from "node:assert/strict";
import { join } from "node:path";
import { writeBigNative } from "../../tests/helpers/big_native.ts";
import { withTempDir } from "../../tests/helpers/temp.ts";
import { withNativeSpine } from "./native_detail.ts";
import { nativeReplay } from "./native_replay.ts";
import { SpineCache } from "./spine_cache.ts";
import { DETAIL_LINE_MAX_BYTES } from "./spine_read.ts";
import { ContainmentError } from "../errors.ts";
import { parseEvents, toReplayEntries } from "../session_log/mod.ts";

const ID = "019b1111-0000-7000-8000-000000000009";

const total = (dir: string, cache: SpineCache) =>
  withNativeSpine(dir, ID, (m) => Promise.resolve(m.total), { cache });

Deno.test("a spine index is small beside its spine, built once, extended on append, rebuilt on rewrite", () =>
  withTempDir(async (root) => {
    const big = await writeBigNative(root, { id: ID, bytes: 8e6 });
    const spine = join(big.dir, "session.jsonl");
    const cache = new SpineCache();
    // Eight concurrent first requests: one build, every one of them sees it.
    const totals = await Promise.all(Array.from({ length: 8 }, () => total(big.dir, cache)));
    assert.equal(new Set(totals).size, 1);
    assert.equal(cache.builds, 1, "concurrent first requests share one build");
    const rows = totals[0]!;
    assert.equal(rows, big.turns + Math.floor(big.turns / 3) + 3);
    const bytes = await withNativeSpine(big.dir, ID, (m) => Promise.resolve(m.index.bytes), {
      cache,
    });
    assert.ok(bytes < big.bytes / 5, `index ${bytes} bytes for a ${big.bytes}-byte spine`);
    assert.ok(cache.bytes < big.bytes / 3, `cached ${cache.bytes} bytes with its builder`);
    // deno-lint-ignore no-console
    console.log(
      `spine ${big.bytes} bytes, ${big.lines} lines → index ${bytes} bytes (${
        (bytes / big.bytes * 100).toFixed(1)
      }%), cached with builder state ${cache.bytes} bytes`,
    );
    // A cached page: no rebuild.
    await total(big.dir, cache);
    assert.equal(cache.builds, 1);
    // An append extends.
    const line = JSON.stringify({
      ts: "10:00:00.000",
      ts_ms: Date.now(),
      event: "error",
      message: "late",
    });
    Deno.writeTextFileSync(spine, line + "\n", { append: true });
    assert.equal(await total(big.dir, cache), rows + 1);
    assert.deepEqual([cache.builds, cache.extensions], [1, 1]);
    // A rewrite in place (same inode, one byte changed, same size) rebuilds.
    const text = Deno.readTextFileSync(spine).replace('"message":"late"', '"message":"LATE"');
    Deno.writeTextFileSync(spine, text);
    await withNativeSpine(big.dir, ID, async (m) => {
      const last = await m.row(m.total - 1);
      assert.equal(last.text, "LATE");
    }, { cache });
    assert.equal(cache.builds, 2);
    // Shorter: rebuilds too.
    Deno.writeTextFileSync(spine, text.slice(0, text.lastIndexOf("\n", text.length - 2) + 1));
    assert.equal(await total(big.dir, cache), rows);
    assert.equal(cache.builds, 3);
  }));

Deno.test("the cache keeps at most its entries and bytes; an index over the budget serves and is dropped", () =>
  withTempDir(async (root) => {
    const dirs: string[] = [];
    for (let i = 0; i < 3; i++) {
      const id = `019b1111-0000-7000-8000-00000000010${i}`;
      dirs.push((await writeBigNative(root, { id, bytes: 300_000 })).dir);
    }
    const two = new SpineCache(2);
    for (const d of dirs) await withNativeSpine(d, "x", () => Promise.resolve(), { cache: two });
    assert.equal(two.size, 2);
    const tiny = new SpineCache(8, 1000);
    const rows = await withNativeSpine(dirs[0]!, "x", (m) => Promise.resolve(m.total), {
      cache: tiny,
    });
    assert.ok(rows > 100, "served");
    assert.deepEqual([tiny.size, tiny.bytes], [0, 0], "not kept");
  }));

Deno.test("a line over DETAIL_LINE_MAX_BYTES is skipped unparsed; lines around it still render", () =>
  withTempDir(async (root) => {
    const dir = join(root, ID);
    Deno.mkdirSync(dir);
    const ev = (m: string) => JSON.stringify({ ts: "10:00:00.000", event: "error", message: m });
    const huge = ev("x".repeat(DETAIL_LINE_MAX_BYTES + 10));
    Deno.writeTextFileSync(
      join(dir, "session.jsonl"),
      `${ev("before")}\n${huge}\n${ev("after")}\n`,
    );
    const cache = new SpineCache();
    await withNativeSpine(dir, ID, async (m) => {
      const rows = await m.rows(0, 10);
      assert.deepEqual(rows.map((r) => [r.text, r.line]), [["before", 1], ["after", 3]]);
      assert.equal(m.index.skipped, 1);
      assert.equal(m.index.lineCount, 3);
    }, { cache });
  }));

Deno.test("replay pages equal the whole-log replay; a page stops at its byte cap; a symlinked spine is refused", () =>
  withTempDir(async (root) => {
    const big = await writeBigNative(root, { id: ID, bytes: 2e6 });
    const bytes = Deno.readFileSync(join(big.dir, "session.jsonl"));
    const all = toReplayEntries(big.dir, parseEvents(bytes).events);
    const page = await nativeReplay(big.dir, ID, { offset: 1000, limit: 500 });
    assert.equal(page.total, all.length);
    assert.deepEqual(page.entries, all.slice(1000, 1500));
    assert.equal(page.next_offset, 1500);
    assert.deepEqual(
      [page.start.provider, page.start.model, page.start.autonomy],
      ["mock", "mock-1", "headless"],
    );
    const end = await nativeReplay(big.dir, ID, { offset: all.length - 3, limit: 500 });
    assert.deepEqual([end.entries.length, end.next_offset], [3, null]);
    // Lines of ~9 MiB each: a page holds one (always at least one), then says where to go on.
    const dir = join(root, "fat");
    Deno.mkdirSync(dir);
    const fat = JSON.stringify({ ts: "10:00:00.000", event: "info", message: "y".repeat(9 << 20) });
    Deno.writeTextFileSync(join(dir, "session.jsonl"), `${fat}\n${fat}\n`);
    const first = await nativeReplay(dir, "fat", { offset: 0, limit: 10 });
    assert.deepEqual([first.entries.length, first.next_offset, first.total], [1, 1, 2]);
    // A spine that is a symlink is refused; a missing one replays empty.
    const linked = join(root, "linked");
    Deno.mkdirSync(linked);
    Deno.symlinkSync(join(big.dir, "session.jsonl"), join(linked, "session.jsonl"));
    await assert.rejects(
      () => nativeReplay(linked, "l", { offset: 0, limit: 5 }),
      ContainmentError,
    );
    const empty = join(root, "empty");
    Deno.mkdirSync(empty);
    assert.equal((await nativeReplay(empty, "e", { offset: 0, limit: 5 })).total, 0);
  }));
