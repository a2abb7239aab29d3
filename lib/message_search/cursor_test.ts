import assert from "node:assert/strict";
import { join } from "node:path";
import { lineText, splitCompleteLines } from "../durable/mod.ts";
import { ContainmentError } from "../errors.ts";
import {
  classifyCursor,
  classifySource,
  cursorFingerprint,
  CursorMismatchError,
  cursorWatermark,
  type FileStatLite,
  readIncrement,
  statSource,
} from "./cursor.ts";
import type { FileCursor } from "./cursor_types.ts";

const lines = (from: number, to: number, pad = 0) => {
  let s = "";
  for (let i = from; i < to; i++) s += JSON.stringify({ id: i, t: "x".repeat(pad) }) + "\n";
  return s;
};

/** Runs `fn` in a fresh temp dir, removed afterwards (local: keeps this test's graph small). */
async function withTempDir(fn: (dir: string) => Promise<void>): Promise<void> {
  const dir = await Deno.makeTempDir({ prefix: "intendant-cursor-" });
  try {
    await fn(dir);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

/** A readRange over the real file that counts how many times it was called. */
function countingReader(path: string) {
  const r = {
    calls: 0,
    read: async (offset: number, len: number) => {
      r.calls++;
      return (await Deno.readFile(path)).subarray(offset, offset + len);
    },
  };
  return r;
}

async function classify(path: string, cursor: FileCursor | null, now = Date.now()) {
  const stat = await statSource(path);
  const reader = countingReader(path);
  const cls = await classifyCursor(cursor, stat, { now, readRange: reader.read });
  return { cls, reads: reader.calls };
}

async function capture(path: string): Promise<FileCursor> {
  return (await readIncrement(path, null)).cursor;
}

/** Sets mtime to `ms` without changing content (Deno.utime takes seconds). */
async function setMtime(path: string, ms: number): Promise<void> {
  await Deno.utime(path, ms / 1000, ms / 1000);
}

Deno.test("statSource returns null when missing and 'other' for symlinks, dirs and FIFOs", async () => {
  await withTempDir(async (dir) => {
    const f = join(dir, "a.jsonl");
    await Deno.writeTextFile(f, lines(0, 3));
    assert.equal(await statSource(join(dir, "missing")), null);
    assert.equal(await statSource(join(f, "below-a-file")), null);
    const st = await statSource(f);
    assert.equal(st?.kind, "file");
    assert.equal(st?.size, (await Deno.stat(f)).size);
    await Deno.symlink(f, join(dir, "link"));
    await Deno.mkdir(join(dir, "d"));
    await new Deno.Command("mkfifo", { args: [join(dir, "fifo")] }).output();
    for (const name of ["link", "d", "fifo"]) {
      assert.equal((await statSource(join(dir, name)))?.kind, "other", name);
    }
  });
});

Deno.test("classifyCursor: missing → gone, non-regular → gone without reading, none → new", async () => {
  await withTempDir(async (dir) => {
    const f = join(dir, "a.jsonl");
    assert.deepEqual((await classify(f, null)).cls, { kind: "gone" });
    await Deno.writeTextFile(f, lines(0, 3));
    const cursor = await capture(f);
    await Deno.remove(f);
    assert.deepEqual((await classify(f, cursor)).cls, { kind: "gone" });
    await Deno.mkdir(f);
    const other = await classify(f, cursor);
    assert.deepEqual(other, { cls: { kind: "gone" }, reads: 0 });
    await Deno.remove(f);
    await Deno.writeTextFile(f, lines(0, 3));
    assert.deepEqual((await classify(f, null)).cls, { kind: "new" });
  });
});

Deno.test("classifyCursor: another inode at the path → rewritten(identity)", async () => {
  await withTempDir(async (dir) => {
    const f = join(dir, "a.jsonl");
    await Deno.writeTextFile(f, lines(0, 3));
    const cursor = await capture(f);
    // Rename over keeps both inodes alive, so the new one cannot reuse the old number.
    await Deno.writeTextFile(join(dir, "b"), lines(0, 5));
    await Deno.rename(join(dir, "b"), f);
    assert.deepEqual((await classify(f, cursor)).cls, { kind: "rewritten", reason: "identity" });
  });
});

Deno.test("classifyCursor: shorter than the offset or the prefix span → rewritten(shrunk)", async () => {
  await withTempDir(async (dir) => {
    const f = join(dir, "a.jsonl");
    await Deno.writeTextFile(f, lines(0, 10));
    const cursor = await capture(f);
    await Deno.truncate(f, cursor.offset - 5);
    assert.deepEqual((await classify(f, cursor)).cls, { kind: "rewritten", reason: "shrunk" });
    // A torn tail that was cut back: offset still fits, the hashed prefix span does not.
    await Deno.writeTextFile(f, lines(0, 10) + '{"torn":');
    const torn = await capture(f);
    await Deno.truncate(f, torn.offset + 3);
    assert.deepEqual((await classify(f, torn)).cls, { kind: "rewritten", reason: "shrunk" });
  });
});

Deno.test("classifyCursor: size+mtime equal and captured > 2 s after mtime → unchanged unread", async () => {
  await withTempDir(async (dir) => {
    const f = join(dir, "a.jsonl");
    await Deno.writeTextFile(f, lines(0, 10));
    await setMtime(f, Date.now() - 60_000);
    const cursor = await capture(f);
    assert.deepEqual(await classify(f, cursor), { cls: { kind: "unchanged" }, reads: 0 });
  });
});

Deno.test("classifyCursor: inside the racy window, or after a clock step back, it reads", async () => {
  await withTempDir(async (dir) => {
    const f = join(dir, "a.jsonl");
    await Deno.writeTextFile(f, lines(0, 10));
    const racy = await capture(f);
    const r1 = await classify(f, racy);
    assert.deepEqual(r1.cls, { kind: "unchanged" });
    assert.ok(r1.reads > 0);
    await setMtime(f, Date.now() - 60_000);
    const old = await capture(f);
    const r2 = await classify(f, old, old.captured_at_ms - 10_000);
    assert.deepEqual(r2.cls, { kind: "unchanged" });
    assert.ok(r2.reads > 0);
  });
});

Deno.test("classifyCursor: a changed prefix span → rewritten(prefix), small and large files", async () => {
  await withTempDir(async (dir) => {
    for (const count of [3, 400]) {
      const f = join(dir, `p${count}.jsonl`);
      const text = lines(0, count, 10);
      await Deno.writeTextFile(f, text);
      const cursor = await capture(f);
      await Deno.writeTextFile(f, text.replace('{"id":0', '{"id":9'));
      const cls = (await classify(f, cursor)).cls;
      assert.deepEqual(cls, { kind: "rewritten", reason: "prefix" }, `${count} lines`);
    }
  });
});

Deno.test("classifyCursor: changed bytes just before the offset → rewritten(anchor)", async () => {
  await withTempDir(async (dir) => {
    const f = join(dir, "a.jsonl");
    const text = lines(0, 400, 10);
    await Deno.writeTextFile(f, text);
    const cursor = await capture(f);
    assert.ok(cursor.offset > 8192 && cursor.anchor_len === 4096);
    await Deno.writeTextFile(f, text.replace('{"id":399', '{"id":777') + lines(400, 410));
    assert.deepEqual((await classify(f, cursor)).cls, { kind: "rewritten", reason: "anchor" });
  });
});

Deno.test("classifyCursor: growth past the offset → appended, also under 4 KiB", async () => {
  await withTempDir(async (dir) => {
    for (const count of [2, 400]) {
      const f = join(dir, `g${count}.jsonl`);
      await Deno.writeTextFile(f, lines(0, count));
      const cursor = await capture(f);
      await Deno.writeTextFile(f, lines(count, count + 1), { append: true });
      assert.deepEqual((await classify(f, cursor)).cls, { kind: "appended" }, `${count} lines`);
    }
  });
});

Deno.test("classifyCursor: a torn tail of the captured size is unchanged; growing it is appended", async () => {
  await withTempDir(async (dir) => {
    const f = join(dir, "a.jsonl");
    await Deno.writeTextFile(f, lines(0, 3) + '{"id":');
    const cursor = await capture(f);
    assert.ok(cursor.offset < cursor.size);
    assert.deepEqual((await classify(f, cursor)).cls, { kind: "unchanged" });
    await Deno.writeTextFile(f, "3}", { append: true });
    assert.deepEqual((await classify(f, cursor)).cls, { kind: "appended" });
  });
});

Deno.test("classifySource never blocks on a FIFO and classifies a regular file", async () => {
  await withTempDir(async (dir) => {
    const fifo = join(dir, "fifo");
    await new Deno.Command("mkfifo", { args: [fifo] }).output();
    assert.deepEqual((await classifySource(fifo, null)).class, { kind: "gone" });
    const f = join(dir, "a.jsonl");
    await Deno.writeTextFile(f, lines(0, 3));
    const cursor = await capture(f);
    await Deno.writeTextFile(f, lines(3, 4), { append: true });
    assert.deepEqual((await classifySource(f, cursor)).class, { kind: "appended" });
  });
});

Deno.test("readIncrement leaves a torn tail, continues line numbers and uses absolute offsets", async () => {
  await withTempDir(async (dir) => {
    const f = join(dir, "a.jsonl");
    await Deno.writeTextFile(f, '{"a":1}\r\n{"b":"é"}\n{"c":');
    const first = await readIncrement(f, null);
    assert.equal(first.lines.length, 2);
    assert.equal(first.cursor.offset, 20); // "é" is two bytes
    assert.equal(first.cursor.next_line, 3);
    assert.equal(lineText(first.bytes, first.lines[0]!, first.baseOffset), '{"a":1}');
    await Deno.writeTextFile(f, '3}\n{"d":4}\n', { append: true });
    const next = await readIncrement(f, first.cursor);
    assert.equal(next.baseOffset, 20);
    assert.deepEqual(next.lines.map((l) => l.lineNo), [3, 4]);
    assert.equal(lineText(next.bytes, next.lines[1]!, next.baseOffset), '{"d":4}');
    assert.equal(next.cursor.offset, (await Deno.stat(f)).size);
  });
});

Deno.test("readIncrement matches a whole-file split across 1 MiB chunk boundaries", async () => {
  await withTempDir(async (dir) => {
    const f = join(dir, "a.jsonl");
    await Deno.writeTextFile(f, lines(0, 3000, 997) + "torn");
    const all = await Deno.readFile(f);
    const expected = splitCompleteLines(all);
    const inc = await readIncrement(f, null);
    assert.deepEqual(inc.lines, expected.lines);
    assert.deepEqual(inc.bytes, all.subarray(0, expected.consumedOffset));
    assert.equal(inc.cursor.offset, expected.consumedOffset);
  });
});

Deno.test("readIncrement stops at a line boundary past maxBytes and resumes there", async () => {
  await withTempDir(async (dir) => {
    const f = join(dir, "a.jsonl");
    await Deno.writeTextFile(f, lines(0, 100));
    const seen: number[] = [];
    let cursor: FileCursor | null = null;
    for (let i = 0; i < 100; i++) {
      const inc: Awaited<ReturnType<typeof readIncrement>> = await readIncrement(f, cursor, {
        maxBytes: 100,
      });
      if (inc.lines.length === 0) break;
      assert.ok(inc.bytes.length < 100 + 20);
      for (const l of inc.lines) seen.push(JSON.parse(lineText(inc.bytes, l, inc.baseOffset)).id);
      cursor = inc.cursor;
    }
    assert.deepEqual(seen, [...Array(100).keys()]);
  });
});

Deno.test("readIncrement skips an oversized line unbuffered, keeping bytes contiguous", async () => {
  await withTempDir(async (dir) => {
    const f = join(dir, "a.jsonl");
    const big = "B".repeat(5000);
    await Deno.writeTextFile(f, `${big}\n${lines(0, 2)}${big}\n${lines(2, 4)}${big}`);
    const opts = { maxLineBytes: 1000 };
    const a = await readIncrement(f, null, opts);
    // Leading oversized line: skipped and rebased; the second one ends the increment.
    assert.deepEqual(a.oversizedLines, [{ lineNo: 1, bytes: 5000 }, { lineNo: 4, bytes: 5000 }]);
    assert.deepEqual(a.lines.map((l) => l.lineNo), [2, 3]);
    assert.equal(a.baseOffset, 5001);
    assert.equal(a.cursor.offset, 5001 + lines(0, 2).length + 5001);
    const b = await readIncrement(f, a.cursor, opts);
    assert.deepEqual(b.lines.map((l) => l.lineNo), [5, 6]);
    assert.deepEqual(b.oversizedLines, []);
    // The oversized torn tail is not consumed until its "\n" arrives.
    assert.equal(b.cursor.offset, (await Deno.stat(f)).size - 5000);
  });
});

Deno.test("readIncrement refuses symlinks and FIFOs and rejects a stale cursor", async () => {
  await withTempDir(async (dir) => {
    const f = join(dir, "a.jsonl");
    await Deno.writeTextFile(f, lines(0, 5));
    await Deno.symlink(f, join(dir, "link"));
    await new Deno.Command("mkfifo", { args: [join(dir, "fifo")] }).output();
    await assert.rejects(readIncrement(join(dir, "link"), null), ContainmentError);
    await assert.rejects(readIncrement(join(dir, "fifo"), null), ContainmentError);
    await assert.rejects(readIncrement(join(dir, "nope"), null), Deno.errors.NotFound);
    const cursor = await capture(f);
    await Deno.writeTextFile(f, lines(5, 12));
    await assert.rejects(
      readIncrement(f, cursor),
      (e) => e instanceof CursorMismatchError && e.reason === "prefix",
    );
    await assert.rejects(readIncrement(f, null, { maxBytes: 0 }), RangeError);
    await assert.rejects(readIncrement(f, null, { maxLineBytes: 1.5 }), RangeError);
  });
});

Deno.test("cursorFingerprint ignores offsets; cursorWatermark sums them", () => {
  const c = (ino: number, offset: number, epoch = 0): FileCursor => ({
    dev: 1,
    ino,
    size: offset,
    mtime_ms: 0,
    captured_at_ms: 0,
    prefix_len: 4096,
    prefix_hash: "00",
    offset,
    anchor_len: 0,
    anchor_hash: "",
    next_line: 1,
    rewrite_epoch: epoch,
  });
  const a = cursorFingerprint({ "x": c(1, 10), "y": c(2, 20) });
  assert.equal(a, cursorFingerprint({ "y": c(2, 99), "x": c(1, 5) }));
  assert.notEqual(a, cursorFingerprint({ "x": c(3, 10), "y": c(2, 20) }));
  // A rebuild from scratch bumps the epoch: a new fingerprint even on the same inode.
  assert.notEqual(a, cursorFingerprint({ "x": c(1, 10, 1), "y": c(2, 20) }));
  assert.equal(cursorWatermark({ "x": c(1, 10), "y": c(2, 20) }), 30);
  const lite: FileStatLite = { kind: "file", dev: 1, ino: 1, size: 0, mtime_ms: null };
  assert.equal(lite.kind, "file");
});

Deno.test("an increment stopped by its byte budget leaves the rest to be classified appended", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const f = `${dir}/x.jsonl`;
    const lines = Array.from(
      { length: 50 },
      (_, i) => JSON.stringify({ id: i, pad: "p".repeat(100) }) + "\n",
    );
    await Deno.writeTextFile(f, lines.join(""));
    let cursor = null;
    let seen = 0;
    for (let round = 0; round < 100; round++) {
      const st = await statSource(f);
      const cls = await classifyCursor(cursor, st, {
        now: Date.now() + 5000,
        readRange: (o, l) => readAt(f, o, l),
      });
      if (cls.kind === "unchanged") break;
      const inc = await readIncrement(f, cursor, { maxBytes: 1000 });
      seen += inc.lines.length;
      cursor = inc.cursor;
    }
    assert.equal(seen, 50);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

async function readAt(path: string, offset: number, len: number): Promise<Uint8Array> {
  const file = await Deno.open(path);
  try {
    await file.seek(offset, Deno.SeekMode.Start);
    const buf = new Uint8Array(len);
    let got = 0;
    while (got < len) {
      const n = await file.read(buf.subarray(got));
      if (!n) break;
      got += n;
    }
    return buf.subarray(0, got);
  } finally {
    file.close();
  }
}
