/**
 * Reliability-plan table B at the cursor + line-reader level (B1–B3, B5–B8, B11, B12).
 * A tiny consumer JSON.parses each complete line and keeps the records currently served,
 * keyed by `id`, so exactly-once holds when every written id is served once with its exact
 * text. Each test prints its figure line (figures.ts) exactly as the plan's last column,
 * and a "detail" line with what else it measured. INTENDANT_STRESS=1 raises
 * B1 to 100,000 records and B5 to a 1 GiB line; INTENDANT_SEED fixes the random seed.
 * One suite past the 600-line mark on purpose: every case shares the consumer and sweep
 * below, and splitting would duplicate them or turn test scaffolding into an export.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { lineText } from "../lib/durable/mod.ts";
import {
  classifyCursor,
  classifySource,
  type Increment,
  MAX_LINE_BYTES,
  readIncrement,
  type ReadIncrementOptions,
  statSource,
} from "../lib/message_search/cursor.ts";
import type { CursorClass, FileCursor } from "../lib/message_search/cursor_types.ts";
import { figure } from "./helpers/figures.ts";
import { systemTool } from "./helpers/temp.ts";

const STRESS = /^(1|true|yes|on)$/i.test(Deno.env.get("INTENDANT_STRESS") ?? "");
const SEED = Number(Deno.env.get("INTENDANT_SEED") ?? Date.now() % 1e9);
const MiB = 1 << 20;
const enc = new TextEncoder();

/** mulberry32: small seeded PRNG so a failing run can be replayed with INTENDANT_SEED. */
function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

async function withTempDir(fn: (dir: string) => Promise<void>): Promise<void> {
  const dir = await Deno.makeTempDir({ prefix: "intendant-cursor-rel-" });
  try {
    await fn(dir);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

/** The test consumer: one source file, the records it serves, and what it rejected. */
interface Consumer {
  path: string;
  cursor: FileCursor | null;
  active: Map<string, string>;
  duplicates: number;
  garbageLines: number;
  nulRuns: number;
  oversized: number;
  classes: CursorClass[];
}

function consumer(path: string): Consumer {
  return {
    path,
    cursor: null,
    active: new Map(),
    duplicates: 0,
    garbageLines: 0,
    nulRuns: 0,
    oversized: 0,
    classes: [],
  };
}

function ingest(c: Consumer, inc: Increment): void {
  c.oversized += inc.oversizedLines.length;
  for (const span of inc.lines) {
    let text = lineText(inc.bytes, span, inc.baseOffset);
    // A crash can extend a file with zeros before the next append (delayed allocation, a
    // copytruncate hole): strip the run so the record behind it is not lost.
    const stripped = text.replace(/^\0+/, "");
    if (stripped.length !== text.length) c.nulRuns++;
    text = stripped;
    if (text.length === 0) continue;
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch (err) {
      if (!(err instanceof SyntaxError)) throw err;
      c.garbageLines++; // Malformed lines are data: counted, never thrown.
      continue;
    }
    const id = (value as { id?: unknown } | null)?.id;
    if (typeof id !== "string") {
      c.garbageLines++;
      continue;
    }
    if (c.active.has(id)) c.duplicates++;
    c.active.set(id, text);
  }
}

/** One sweep over the consumer's file: classify, then read every increment available. */
async function sweep(c: Consumer, opts: ReadIncrementOptions = {}): Promise<CursorClass> {
  const cls = (await classifySource(c.path, c.cursor)).class;
  c.classes.push(cls);
  if (cls.kind === "rewritten") {
    c.active.clear(); // Old records stop being served; the file is read from the start.
    c.cursor = null;
  }
  if (cls.kind === "unchanged" || cls.kind === "gone") return cls;
  for (;;) {
    const inc = await readIncrement(c.path, c.cursor, opts);
    ingest(c, inc);
    const moved = inc.cursor.offset !== (c.cursor?.offset ?? 0);
    c.cursor = inc.cursor;
    if (!moved || inc.cursor.offset === inc.cursor.size) return cls;
  }
}

const rec = (id: string, t = "") => JSON.stringify({ id, t }) + "\n";
const recs = (prefix: string, from: number, to: number, t = "") => {
  let s = "";
  for (let i = from; i < to; i++) s += rec(`${prefix}${i}`, t);
  return s;
};

/** Records the file holds now, parsed independently of the cursor code. */
async function idsInFile(path: string): Promise<string[]> {
  const ids: string[] = [];
  for (const line of (await Deno.readTextFile(path)).split("\n")) {
    try {
      ids.push(JSON.parse(line).id);
    } catch (err) {
      if (!(err instanceof SyntaxError)) throw err; // a torn or empty line holds no record
    }
  }
  return ids;
}

const fmt = (n: number) => n.toLocaleString("en-US");

Deno.test("B1 torn writes split lines and UTF-8 sequences; each record is indexed once", async () => {
  const n = STRESS ? 100_000 : 20_000;
  const rand = prng(SEED);
  const alphabet = ["a", "b", " ", "é", "漢", "字", "😀", "\\", '"', "\t", "ß", "🧪"];
  const expected = new Map<string, string>();
  let text = "";
  for (let i = 0; i < n; i++) {
    const len = rand() < 0.02 ? 2000 + Math.floor(rand() * 8000) : Math.floor(rand() * 120);
    let t = "";
    for (let k = 0; k < len; k++) t += alphabet[Math.floor(rand() * alphabet.length)];
    const line = rec(`r${i}`, t);
    expected.set(`r${i}`, line.slice(0, -1));
    text += line;
  }
  const bytes = enc.encode(text);
  await withTempDir(async (dir) => {
    const c = consumer(join(dir, "session.jsonl"));
    const file = await Deno.open(c.path, { createNew: true, append: true });
    let pos = 0;
    let sweeps = 0;
    let splitUtf8 = 0;
    let partialPublished = 0;
    try {
      while (pos < bytes.length) {
        // Log-uniform 1 B–64 KiB: many tiny chunks (torn lines and code points), some large.
        const size = Math.max(1, Math.floor(Math.exp(rand() * Math.log(64 * 1024))));
        const end = Math.min(bytes.length, pos + size);
        if (end < bytes.length && (bytes[end]! & 0xc0) === 0x80) splitUtf8++;
        let off = pos;
        while (off < end) off += await file.write(bytes.subarray(off, end));
        pos = end;
        await sweep(c);
        sweeps++;
      }
    } finally {
      file.close();
    }
    for (const [id, line] of c.active) if (expected.get(id) !== line) partialPublished++;
    const lost = [...expected.keys()].filter((id) => !c.active.has(id)).length;
    const rewrites = c.classes.filter((k) => k.kind === "rewritten").length;
    figure(
      "B1",
      `records written: ${fmt(n)}, indexed: ${fmt(c.active.size)}, duplicates: ${c.duplicates}, ` +
        `lost: ${lost}, partial records published: ${partialPublished}`,
    );
    console.log(
      `B1 detail: sweeps: ${fmt(sweeps)}, chunks splitting a UTF-8 sequence: ${fmt(splitUtf8)}, ` +
        `rewrites: ${rewrites}, garbage lines: ${c.garbageLines}, seed ${SEED}`,
    );
    assert.equal(c.active.size, n);
    assert.deepEqual([c.duplicates, lost, partialPublished, rewrites, c.garbageLines], [
      0,
      0,
      0,
      0,
      0,
    ]);
  });
});

Deno.test("B2 a parsable line without its newline is not consumed until the newline", async () => {
  await withTempDir(async (dir) => {
    const c = consumer(join(dir, "session.jsonl"));
    await Deno.writeTextFile(c.path, rec("a") + '{"id":"b","t":""}');
    let early = 0;
    for (let i = 0; i < 5; i++) {
      await sweep(c);
      if (c.active.has("b")) early++;
    }
    assert.equal(c.active.size, 1);
    await Deno.writeTextFile(c.path, "\n", { append: true });
    await sweep(c);
    figure("B2", `early consumption: ${early}`);
    console.log(`B2 detail: served after "\\n": ${c.active.has("b")}`);
    assert.equal(early, 0);
    assert.deepEqual([...c.active.keys()], ["a", "b"]);
  });
});

Deno.test("B3 garbage and NUL runs are counted and the valid lines after them indexed", async () => {
  const rand = prng(SEED + 3);
  const randomBytes = (len: number) => Uint8Array.from({ length: len }, () => rand() * 256);
  await withTempDir(async (dir) => {
    const c = consumer(join(dir, "session.jsonl"));
    await Deno.writeTextFile(c.path, recs("v", 0, 10));
    await sweep(c);
    const kinds = ["nul-no-newline", "nul-newline", "random-newline"] as const;
    const runs = 30;
    let validAfter = 0;
    for (let i = 0; i < runs; i++) {
      const kind = kinds[i % kinds.length]!;
      const len = 1 + Math.floor(rand() * 64 * 1024);
      const garbage = kind === "random-newline" ? randomBytes(len) : new Uint8Array(len);
      await Deno.writeFile(c.path, garbage, { append: true });
      if (kind !== "nul-no-newline") await Deno.writeTextFile(c.path, "\n", { append: true });
      await sweep(c);
      await Deno.writeTextFile(c.path, recs(`g${i}-`, 0, 10), { append: true });
      validAfter += 10;
      await sweep(c);
    }
    const indexed = [...c.active.keys()].filter((id) => id.startsWith("g")).length;
    // Unterminated random bytes merge with the next line: the splitter cannot know where
    // garbage ends, so that one line is garbage too (resync inside a line is the extractor's).
    await Deno.writeFile(c.path, randomBytes(100).map((b) => (b === 10 || b === 0 ? 32 : b)), {
      append: true,
    });
    const before = c.garbageLines;
    await Deno.writeTextFile(c.path, recs("m", 0, 3), { append: true });
    await sweep(c);
    figure(
      "B3",
      `valid-after-garbage indexed: ${(indexed / validAfter * 100).toFixed(0)}%, garbage runs ` +
        `counted: ${fmt(c.garbageLines + c.nulRuns)} lines from ${runs} runs, crashes: 0`,
    );
    console.log(
      `B3 detail: ${indexed}/${validAfter} valid lines after garbage, garbage runs written: ` +
        `${runs}, garbage lines counted: ${c.garbageLines}, NUL runs stripped: ${c.nulRuns}; ` +
        `unterminated random run merged into the next line: ${c.garbageLines - before} line, ` +
        `later lines indexed: ${["m1", "m2"].filter((id) => c.active.has(id)).length}/2`,
    );
    assert.equal(indexed, validAfter);
    assert.ok(c.nulRuns >= (runs / 3) * 2 && c.garbageLines >= 1);
  });
});

Deno.test("B5 a huge single line is skipped with bounded memory", async () => {
  const lineBytes = STRESS ? 1024 * MiB : 256 * MiB;
  await withTempDir(async (dir) => {
    const path = join(dir, "session.jsonl");
    const file = await Deno.open(path, { createNew: true, write: true });
    try {
      const block = new Uint8Array(MiB).fill(0x78);
      await file.write(enc.encode('{"id":"huge","t":"'));
      for (let left = lineBytes; left > 0; left -= MiB) {
        const part = block.subarray(0, Math.min(MiB, left));
        let off = 0;
        while (off < part.length) off += await file.write(part.subarray(off));
      }
      await file.write(enc.encode('"}\n' + recs("after", 0, 100)));
    } finally {
      file.close();
    }
    // RSS is per process and `deno test --parallel` shares it between test modules, so the
    // sweep runs in a child that runs this file's main block (Deno.test is inert there).
    const out = await new Deno.Command(Deno.execPath(), {
      args: [
        "run",
        "--no-config",
        "--allow-read",
        "--allow-env=INTENDANT_STRESS,INTENDANT_SEED",
        new URL(import.meta.url).pathname,
        B5_CHILD,
        path,
      ],
    }).output();
    const stderr = new TextDecoder().decode(out.stderr);
    assert.ok(out.success, stderr);
    const r: HugeLineResult = JSON.parse(new TextDecoder().decode(out.stdout).trim());
    const capMiB = MAX_LINE_BYTES / MiB;
    figure(
      "B5",
      `RSS delta: ${r.deltaMiB.toFixed(0)} MiB ≤ cap+64 MiB, lines skipped: ${r.skipped}, ` +
        `following indexed: ${r.following}/100, RangeError/OOM: ${r.rangeErrors}, wall time: ` +
        `${r.wallS.toFixed(2)} s`,
    );
    console.log(`B5 detail: line ${lineBytes / MiB} MiB, cap ${capMiB} MiB (MAX_LINE_BYTES)`);
    assert.deepEqual([r.skipped, r.following, r.rangeErrors], [1, 100, 0]);
    assert.ok(r.deltaMiB <= capMiB + 64, `RSS delta ${r.deltaMiB} MiB`);
  });
});

const B5_CHILD = "b5-child";

interface HugeLineResult {
  deltaMiB: number;
  skipped: number;
  following: number;
  rangeErrors: number;
  wallS: number;
}

/** B5's measured part: one sweep of the huge-line file, sampling this process's RSS. */
async function sweepHugeLine(path: string): Promise<HugeLineResult> {
  const c = consumer(path);
  const base = Deno.memoryUsage().rss;
  let peak = base;
  const sampler = setInterval(() => peak = Math.max(peak, Deno.memoryUsage().rss), 5);
  const t0 = performance.now();
  let rangeErrors = 0;
  try {
    await sweep(c);
  } catch (err) {
    if (!(err instanceof RangeError)) throw err;
    rangeErrors++;
  } finally {
    clearInterval(sampler);
  }
  peak = Math.max(peak, Deno.memoryUsage().rss);
  return {
    deltaMiB: (peak - base) / MiB,
    skipped: c.oversized,
    following: [...c.active.keys()].filter((id) => id.startsWith("after")).length,
    rangeErrors,
    wallS: (performance.now() - t0) / 1000,
  };
}

if (import.meta.main && Deno.args[0] === B5_CHILD) {
  console.log(JSON.stringify(await sweepHugeLine(Deno.args[1]!)));
}

Deno.test("B6 truncate and regrow: every case is rewritten and only new records are served", async () => {
  const base = recs("a", 0, 400, "old"); // ≈ 9 KiB: prefix and anchor spans are disjoint
  const sameLen = (s: string, from: string, to: string) => {
    assert.equal(from.length, to.length);
    return s.replaceAll(from, to);
  };
  const cases: [string, string, (p: string, c: FileCursor) => Promise<void>][] = [
    ["(a) truncate to 0, regrow shorter", "shrunk", async (p) => {
      await Deno.truncate(p, 0);
      await Deno.writeTextFile(p, recs("n", 0, 5), { append: true });
    }],
    ["(b) regrow longer, new prefix", "prefix", async (p) => {
      await Deno.truncate(p, 0);
      await Deno.writeTextFile(p, recs("n", 0, 400, "new"), { append: true });
    }],
    ["(c) same length, new prefix", "prefix", async (p) => {
      await Deno.writeTextFile(p, sameLen(base, '"old"}', '"new"}'));
    }],
    ["(d) same length+first 4 KiB, new tail, mtime forced", "anchor", async (p, c) => {
      const lines = base.split("\n");
      const tail = lines.slice(250).join("\n").replaceAll('"id":"a', '"id":"d');
      await Deno.writeTextFile(p, lines.slice(0, 250).join("\n") + "\n" + tail);
      await Deno.utime(p, c.mtime_ms! / 1000, c.mtime_ms! / 1000);
    }],
    ["(e) truncate mid-line, regrow past the offset", "anchor", async (p, c) => {
      await Deno.truncate(p, c.offset - 15);
      await Deno.writeTextFile(p, "\n" + recs("e", 0, 20), { append: true });
    }],
    ["(e') truncate mid-line", "shrunk", async (p, c) => {
      await Deno.truncate(p, c.offset - 15);
    }],
  ];
  await withTempDir(async (dir) => {
    const results: string[] = [];
    let stale = 0;
    let dups = 0;
    let missing = 0;
    for (const [i, [name, reason, mutate]] of cases.entries()) {
      const c = consumer(join(dir, `s${i}.jsonl`));
      await Deno.writeTextFile(c.path, base);
      await sweep(c);
      await mutate(c.path, c.cursor!);
      const cls = await sweep(c);
      const ok = cls.kind === "rewritten" && cls.reason === reason;
      results.push(
        `${name}: ${ok ? "yes" : "no"} (${cls.kind}${"reason" in cls ? `/${cls.reason}` : ""})`,
      );
      const now = await idsInFile(c.path);
      stale += [...c.active.keys()].filter((id) => !now.includes(id)).length;
      missing += now.filter((id) => !c.active.has(id)).length;
      dups += c.duplicates;
      assert.ok(ok, `${name}: ${JSON.stringify(cls)}`);
    }
    // Outside the racy window equal size+mtime is trusted unread (git's rule): a forged
    // mtime there is not detectable without ctime in the cursor. Measured, not asserted.
    const p = join(dir, "forged.jsonl");
    await Deno.writeTextFile(p, base);
    await Deno.utime(p, (Date.now() - 60_000) / 1000, (Date.now() - 60_000) / 1000);
    const cursor = (await readIncrement(p, null)).cursor;
    await Deno.writeTextFile(p, sameLen(base, '"old"}', '"new"}'));
    await Deno.utime(p, cursor.mtime_ms! / 1000, cursor.mtime_ms! / 1000);
    const forged = (await classifySource(p, cursor)).class.kind;
    figure(
      "B6",
      `per case: classification correct ${
        results.map((r) => r.replace(/^(\([a-z]'?\)).*: (yes|no) .*$/, "$1 $2")).join(", ")
      }, ` +
        `stale-active records: ${stale}, new records indexed: ${
          missing === 0 ? "100%" : `missing ${missing}`
        }, duplicates: ${dups}`,
    );
    console.log(
      `B6 detail: ${results.join("; ")}; (d') forged mtime outside the racy window: ${forged} ` +
        `(known limit)`,
    );
    assert.deepEqual([stale, missing, dups], [0, 0, 0]);
  });
});

Deno.test("B7 a small file growing by single records is never rebuilt", async () => {
  await withTempDir(async (dir) => {
    const c = consumer(join(dir, "session.jsonl"));
    await Deno.writeTextFile(c.path, rec("h"));
    await sweep(c);
    for (let i = 0; i < 500; i++) {
      await Deno.writeTextFile(c.path, rec(`s${i}`), { append: true });
      await sweep(c);
    }
    const rebuilds = c.classes.filter((k) => k.kind === "rewritten").length;
    const appended = c.classes.filter((k) => k.kind === "appended").length;
    const size = (await Deno.stat(c.path)).size;
    figure("B7", `rebuilds triggered by pure appends: ${rebuilds}`);
    console.log(
      `B7 detail: appended: ${appended}/500, size grew to ${size} B across the 4 KiB prefix ` +
        `span, records: ${c.active.size}/501`,
    );
    assert.deepEqual([rebuilds, appended, c.active.size], [0, 500, 501]);
  });
});

Deno.test("B8 delete and recreate at the same path never resumes at the stale offset", async () => {
  const old = rec("header-A", "x".repeat(100)) + recs("a", 0, 250, "pad"); // ≈ 8 KiB
  await withTempDir(async (dir) => {
    const reused = { a: 0, b: 0 };
    let misAppended = 0;
    let missed = 0;
    for (let round = 0; round < 50; round++) {
      for (const variant of ["a", "b"] as const) {
        const c = consumer(join(dir, `${variant}.jsonl`));
        await Deno.writeTextFile(c.path, old);
        await sweep(c);
        const { ino } = await Deno.stat(c.path);
        const offset = c.cursor!.offset;
        await Deno.remove(c.path);
        let next: string;
        if (variant === "a") {
          next = rec("header-B", "y".repeat(round * 3)) + recs(`b${round}-`, 0, round * 5);
        } else {
          // Keep whole lines up to ~300 B before the old offset (> 4 KiB), then new records.
          next = old.slice(0, old.lastIndexOf("\n", offset - 300) + 1);
          assert.ok(next.length > 4096);
          for (let i = 0; next.length <= offset + 500; i++) next += rec(`n${round}-${i}`, "pad");
        }
        await Deno.writeTextFile(c.path, next, { createNew: true });
        if ((await Deno.stat(c.path)).ino === ino) reused[variant]++;
        const cls = await sweep(c);
        if (cls.kind === "appended") misAppended++;
        const ids = await idsInFile(c.path);
        missed += ids.filter((id) => !c.active.has(id)).length;
        missed += c.active.size - ids.length; // stale survivors also count as wrong
        await Deno.remove(c.path);
      }
    }
    figure(
      "B8",
      `inode reused: ${reused.a}/50 (a), ${reused.b}/50 (b), missed records: ${missed}, ` +
        `misclassified Appended: ${misAppended}`,
    );
    assert.deepEqual([missed, misAppended], [0, 0]);
  });
});

Deno.test("B11 hostile file types are never read and never block", async () => {
  await withTempDir(async (dir) => {
    const src = join(dir, "sources");
    const outside = join(dir, "outside");
    await Deno.mkdir(src);
    await Deno.mkdir(outside);
    const canary = join(outside, "canary.jsonl");
    await Deno.writeTextFile(canary, rec("CANARY"));
    await new Deno.Command("mkfifo", { args: [join(src, "fifo.jsonl")] }).output();
    await Deno.symlink("/dev/zero", join(src, "zero.jsonl"));
    await Deno.symlink(canary, join(src, "canary.jsonl"));
    await Deno.mkdir(join(src, "session.jsonl"));
    const listener = Deno.listen({ transport: "unix", path: join(src, "sock.jsonl") });
    const mode000 = join(src, "mode000.jsonl");
    await Deno.writeTextFile(mode000, rec("secret"));
    await Deno.chmod(mode000, 0o000);
    const isRoot = Deno.uid() === 0;
    const hostile = ["fifo", "zero", "canary", "session", "sock"].map((n) =>
      join(src, `${n}.jsonl`)
    );
    let bytesRead = 0;
    let blocked = 0;
    let notOther = 0;
    let refused = 0;
    const t0 = performance.now();
    const timed = <T>(p: Promise<T>) => {
      let timer: ReturnType<typeof setTimeout> | undefined;
      const timeout = new Promise<"blocked">((r) => timer = setTimeout(() => r("blocked"), 3000));
      return Promise.race([p, timeout]).finally(() => clearTimeout(timer));
    };
    try {
      for (const path of hostile) {
        if ((await statSource(path))?.kind !== "other") notOther++;
        const c = consumer(path);
        if (await timed(sweep(c)) === "blocked") blocked++;
        bytesRead += c.active.size;
        const direct = await timed(
          readIncrement(path, null).then(
            (inc) => (bytesRead += inc.bytes.length, "read"),
            (err: Error) => (refused++, err.name),
          ),
        );
        if (direct === "blocked") blocked++;
      }
      let permission = "PermissionDenied, counted";
      if (!isRoot) {
        const err = await readIncrement(mode000, null).then(() => null, (e: unknown) => e);
        assert.ok(err instanceof Deno.errors.PermissionDenied, String(err));
      } else {
        permission = await permissionAsNobody(dir, mode000);
      }
      const escaped = await swapRace(src, canary);
      const ms = performance.now() - t0;
      figure(
        "B11",
        `blocked sweeps: ${blocked}, bytes read from non-regular/outside: ${bytesRead}, ` +
          `sweep time: ${ms.toFixed(0)} ms ≤ budget (3 s a sweep)`,
      );
      console.log(
        `B11 detail: non-regular classified other: ${
          hostile.length - notOther
        }/${hostile.length}, ` +
          `direct reads refused: ${refused}/${hostile.length}, mode-000: ${permission}, ` +
          `swap race escaped reads: ${escaped.escaped}/${escaped.tries} ` +
          `(swaps ${escaped.swaps}, refused ${escaped.refused})`,
      );
      assert.deepEqual([blocked, bytesRead, notOther, refused, escaped.escaped], [0, 0, 0, 5, 0]);
      assert.ok(escaped.swaps >= 100 && escaped.refused > 0, "the swap race must really race");
    } finally {
      listener.close();
      await Deno.chmod(mode000, 0o600);
    }
  });
});

/**
 * Root reads mode-000 files, so as root the check runs in a child as uid "nobody" (via
 * runuser); where that is impossible it is skipped and the figure line says so.
 */
async function permissionAsNobody(dir: string, file: string): Promise<string> {
  const skipped = "skipped (running as root: mode 000 is readable";
  const script = join(dir, "as_nobody.ts");
  const cursorUrl = new URL("../lib/message_search/cursor.ts", import.meta.url).href;
  await Deno.writeTextFile(
    script,
    `const { readIncrement } = await import(${JSON.stringify(cursorUrl)});\n` +
      `const e = await readIncrement(Deno.args[0], null).then(() => null, (e) => e);\n` +
      `console.log(e instanceof Deno.errors.PermissionDenied ? "PermissionDenied" : String(e));\n`,
  );
  const denoDir = join(dir, "deno_dir");
  await Deno.mkdir(denoDir);
  await Deno.chmod(denoDir, 0o777);
  await Deno.chmod(dir, 0o755);
  await Deno.chmod(script, 0o644);
  // npx keeps deno under /root, out of nobody's reach: run nobody's own executable copy.
  const deno = join(dir, "deno");
  await Deno.copyFile(Deno.execPath(), deno);
  await Deno.chmod(deno, 0o755);
  const args = ["-u", "nobody", "--", deno, "run", "--no-config", "--allow-read"];
  let out: Deno.CommandOutput;
  try {
    out = await new Deno.Command(systemTool("runuser"), {
      args: [...args, script, file],
      env: { DENO_DIR: denoDir },
    }).output();
  } catch (err) {
    if (!(err instanceof Deno.errors.NotFound)) throw err;
    return `${skipped}, no runuser)`;
  }
  const said = new TextDecoder().decode(out.stdout).trim();
  if (!out.success) return `${skipped}, child as nobody could not run: exit ${out.code})`;
  assert.equal(said, "PermissionDenied");
  return "PermissionDenied, counted (checked in a child as uid nobody: tests run as root)";
}

/** Swaps a source between a regular file and a symlink to the canary while reading it. */
async function swapRace(src: string, canary: string) {
  const path = join(src, "swap.jsonl");
  await Deno.writeTextFile(path, rec("REG"));
  const r = { tries: 0, swaps: 0, escaped: 0, refused: 0 };
  let stop = false;
  const swapper = (async () => {
    for (; !stop; r.swaps++) {
      const tmp = join(src, `.swap-${r.swaps}`);
      if (r.swaps % 2 === 0) await Deno.symlink(canary, tmp);
      else await Deno.writeTextFile(tmp, rec("REG"));
      await Deno.rename(tmp, path);
    }
  })();
  const deadline = Date.now() + 5000;
  try {
    // Until both sides did ≥ 300 steps: a busy disk can stall the swapper for a while.
    while ((r.tries < 300 || r.swaps < 300) && Date.now() < deadline) {
      r.tries++;
      const inc = await readIncrement(path, null).catch((err) => {
        if (!(err instanceof Error) || !/Containment|NotFound/.test(err.name)) throw err;
        r.refused++;
        return null;
      });
      if (inc && new TextDecoder().decode(inc.bytes).includes("CANARY")) r.escaped++;
    }
  } finally {
    stop = true;
    await swapper;
  }
  return r;
}

Deno.test("B12 same-length racily-clean rewrites with a forced mtime are caught", async () => {
  const rand = prng(SEED + 12);
  await withTempDir(async (dir) => {
    let missed = 0;
    const path = join(dir, "session.jsonl");
    const iterations = 200;
    for (let i = 0; i < iterations; i++) {
      const count = 5 + Math.floor(rand() * 400);
      const text = recs("r", 0, count, "abcdef");
      await Deno.writeTextFile(path, text);
      const cursor = (await readIncrement(path, null)).cursor;
      assert.ok(cursor.captured_at_ms - cursor.mtime_ms! <= 2000, "inside the racy window");
      // In-place, same length: a byte of the first line, of the last line, or all of it.
      let next = text;
      if (i % 3 === 0) next = "{" + '"id":"x0"' + text.slice(10);
      else if (i % 3 === 1) next = text.slice(0, -5) + 'X"}\n'.padStart(5, "Y");
      else next = text.replaceAll("abcdef", "ghijkl");
      assert.equal(enc.encode(next).length, enc.encode(text).length);
      const f = await Deno.open(path, { write: true });
      try {
        await f.write(enc.encode(next));
      } finally {
        f.close();
      }
      await Deno.utime(path, cursor.mtime_ms! / 1000, cursor.mtime_ms! / 1000);
      const stat = await statSource(path);
      assert.deepEqual([stat?.size, stat?.mtime_ms], [cursor.size, cursor.mtime_ms]);
      const cls = await classifyCursor(cursor, stat, {
        now: Date.now(),
        readRange: async (o, l) => (await Deno.readFile(path)).subarray(o, o + l),
      });
      if (cls.kind !== "rewritten") missed++;
    }
    figure("B12", `racily-clean rewrites missed: ${missed}/${iterations}`);
    console.log(
      `B12 detail: rewrites touch the first or last 4 KiB; size and mtime forced equal to the ` +
        `cursor's`,
    );
    assert.equal(missed, 0);
  });
});
