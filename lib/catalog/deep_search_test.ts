import assert from "node:assert/strict";
import { join } from "node:path";
import { InvalidInputError } from "../errors.ts";
import { fold } from "../message_search/mod.ts";
import { NEVER_INDEX_MARK } from "../../tests/fixtures/types.ts";
import {
  buildCatalogWorld,
  REASONING_MARK,
  shardRecords,
  TOOL_MARK,
} from "../../tests/helpers/catalog_world.ts";
import { withTempDir } from "../../tests/helpers/temp.ts";
import { encodeDeepCursor, needleFingerprint } from "./deep_cursor.ts";
import { deepSearch } from "./deep_search.ts";
import type { CatalogDeps, DeepHit } from "./types.ts";

const enc = new TextEncoder();
const dec = new TextDecoder();

/** Every hit's ranges select text that folds to the needle. */
function assertRanges(hits: DeepHit[], q: string): void {
  for (const h of hits) {
    const bytes = enc.encode(h.snippet);
    assert.ok(bytes.length <= 280, "snippet ≤ 280 bytes");
    assert.ok(h.ranges.length > 0);
    for (const [a, b] of h.ranges) assert.equal(fold(dec.decode(bytes.subarray(a, b))), fold(q));
  }
}

async function allPages(d: CatalogDeps, q: string, o: { limit?: number; maxBytes?: number }) {
  const hits: DeepHit[] = [];
  let cursor: string | null = null;
  let pages = 0;
  let partial = 0;
  do {
    const r: Awaited<ReturnType<typeof deepSearch>> = await deepSearch(d, { q, cursor, ...o });
    hits.push(...r.hits);
    if (o.maxBytes) assert.ok(r.scanned_bytes <= o.maxBytes, "page respects maxBytes");
    if (r.partial) partial++;
    cursor = r.cursor;
    pages++;
  } while (cursor);
  return { hits, pages, partial };
}

Deno.test("deepSearch() reaches reasoning and tool output that the message index excludes", () =>
  withTempDir(async (root) => {
    const w = await buildCatalogWorld(root, { natives: 1 });
    for (const mark of [REASONING_MARK, TOOL_MARK, NEVER_INDEX_MARK]) {
      for (const key of Object.keys((await w.store.readManifest()).sessions)) {
        const recs = await shardRecords(w.store, key);
        assert.ok(!recs.some((r) => r.text.includes(mark)), `${mark} is not in the index (${key})`);
      }
    }
    const reasoning = await deepSearch(w.deps, { q: REASONING_MARK.toLowerCase() });
    assert.deepEqual(reasoning.hits.map((h) => [h.session_id, h.file]), [[
      w.runner!.id,
      "turns/turn_001_reasoning.txt",
    ]]);
    assert.equal(reasoning.hits[0]!.offset, "Think first: ".length);
    assert.equal(reasoning.cursor, null);
    const tool = await deepSearch(w.deps, { q: TOOL_MARK });
    const files = tool.hits.map((h) => h.file);
    assert.ok(files.includes("turns/turn_001_stdout.txt"));
    assert.ok(files.some((f) => /^n1_[0-9a-f]{32}_stdout\.log$/.test(f)));
    assert.ok(files.includes("session.jsonl"), "the command line itself is in the spine");
    const spine = tool.hits.find((h) => h.file === "session.jsonl")!;
    assert.ok(spine.line! > 1 && spine.offset === undefined);
    assertRanges(tool.hits, TOOL_MARK);
    // The fixture session's never-index plants (reasoning, tool output) are found too.
    const never = await deepSearch(w.deps, { q: NEVER_INDEX_MARK });
    assert.ok(never.hits.some((h) => h.file.endsWith("_reasoning.txt")));
    assert.ok(never.hits.some((h) => h.file.endsWith("_stdout.txt")));
  }));

Deno.test("deepSearch() pages with its cursor and respects maxBytes, yielding the one-shot result", () =>
  withTempDir(async (root) => {
    const w = await buildCatalogWorld(root, { natives: 3 });
    // Pad a session with a big reasoning file so byte budgets bite mid-file.
    const dir = w.natives[0]!.dir;
    const filler = Array.from(
      { length: 6000 },
      (_, i) => `line ${i} of filler text ${i % 97 === 0 ? "Turn marker" : ""}`,
    );
    Deno.writeTextFileSync(join(dir, "turns", "turn_050_reasoning.txt"), filler.join("\n") + "\n");
    const q = "turn";
    const one = await deepSearch(w.deps, { q, limit: 1000 });
    assert.equal(one.cursor, null);
    assert.equal(one.partial, false);
    assert.ok(one.hits.length > 60);
    assertRanges(one.hits, q);
    const byLimit = await allPages(w.deps, q, { limit: 7 });
    assert.deepEqual(byLimit.hits, one.hits);
    assert.ok(byLimit.pages > 8);
    const byBytes = await allPages(w.deps, q, { limit: 1000, maxBytes: 64 * 1024 });
    assert.deepEqual(byBytes.hits, one.hits);
    assert.ok(byBytes.partial > 0, "some pages ended on the byte budget");
    await assert.rejects(() => deepSearch(w.deps, { q, maxBytes: 1024 }), RangeError);
  }));

Deno.test("deepSearch() matches over-long lines in overlapping windows: once each, none lost", () =>
  withTempDir(async (root) => {
    const w = await buildCatalogWorld(root, { runner: false, natives: 1 });
    const dir = w.natives[0]!.dir;
    const MiB = 1024 * 1024;
    const needle = "NEEDLE-Ünïcode-✓";
    const nb = enc.encode(needle).length;
    // One 3.5 MiB line; matches at the start, straddling the first window's overlap edge,
    // right at a window boundary and near the end.
    const line = new Uint8Array(3.5 * MiB).fill(0x61);
    const at = [10, MiB - 40, 2 * MiB - 200, 3.5 * MiB - nb - 5];
    for (const a of at) line.set(enc.encode(needle), a);
    const body = new Uint8Array(line.length + 1);
    body.set(line);
    body[line.length] = 0x0a;
    Deno.writeFileSync(join(dir, "turns", "turn_060_stdout.txt"), body);
    const r = await deepSearch(w.deps, { q: needle.toUpperCase(), limit: 1000 });
    const found = r.hits.filter((h) => h.file === "turns/turn_060_stdout.txt").map((h) => h.offset);
    assert.deepEqual(found, at);
    const paged = await allPages(w.deps, needle, { maxBytes: 64 * 1024 });
    assert.deepEqual(
      paged.hits.filter((h) => h.file === "turns/turn_060_stdout.txt").map((h) => h.offset),
      at,
    );
  }));

Deno.test("deepSearch() refuses forged cursors and never reads through symlinks", () =>
  withTempDir(async (root) => {
    const w = await buildCatalogWorld(root, { runner: false, natives: 2 });
    const s = w.natives[0]!;
    const canary = join(root, "canary.txt");
    Deno.writeTextFileSync(canary, "secret SYMLINKED-CANARY text\n");
    Deno.symlinkSync(canary, join(s.dir, "turns", "turn_070_reasoning.txt"));
    Deno.linkSync(canary, join(s.dir, "turns", "turn_071_reasoning.txt"));
    Deno.symlinkSync(canary, join(s.dir, `x_${"c".repeat(32)}_stdout.log`));
    assert.equal((await deepSearch(w.deps, { q: "SYMLINKED-CANARY" })).hits.length, 0);
    const q = "turn";
    const first = await deepSearch(w.deps, { q, limit: 1 });
    assert.ok(first.cursor);
    const good = {
      v: 1 as const,
      q: needleFingerprint(fold(q)),
      c: 0,
      s: s.id,
      f: "session.jsonl",
      o: 0,
      n: 1,
      m: false,
    };
    const forged = [
      "!!",
      "x".repeat(2000),
      btoa("not json"),
      encodeDeepCursor({ ...good, f: "../../etc/passwd" }),
      encodeDeepCursor({ ...good, f: "turns/../../x" }),
      encodeDeepCursor({ ...good, s: "../x" }),
      encodeDeepCursor({ ...good, q: "0000000000000000" }),
      encodeDeepCursor({ ...good, o: -1 }),
      encodeDeepCursor({ ...good, extra: 1 } as typeof good),
    ];
    for (const c of forged) {
      await assert.rejects(
        () => deepSearch(w.deps, { q, cursor: c }),
        InvalidInputError,
        c.slice(0, 40),
      );
    }
    // A cursor of another query is refused, not silently reused.
    await assert.rejects(
      () => deepSearch(w.deps, { q: "other", cursor: first.cursor }),
      InvalidInputError,
    );
    await assert.rejects(() => deepSearch(w.deps, { q: "" }), InvalidInputError);
  }));

Deno.test("deepSearch() pages identically under any limit and byte budget (long lines, Unicode, no final newline)", () =>
  withTempDir(async (root) => {
    const w = await buildCatalogWorld(root, { runner: false, natives: 2 });
    let seed = 7;
    const rnd = (n: number) => (seed = (seed * 1103515245 + 12345) % 2 ** 31) % n;
    const words = ["alpha", "ßeta", "ΓΑΜΜΑ", "délta", "日本語", "🍪", "kéz"];
    const keys = ["kéy", "KÉY", "ke\u0301y"];
    for (const [i, s] of w.natives.entries()) {
      const lines: string[] = [];
      for (let l = 0; l < 400; l++) {
        const n = l % 150 === 7 ? 150_000 : rnd(10) === 0 ? 2_000 + rnd(20_000) : rnd(400);
        const parts: string[] = [];
        for (let k = 0; k < n; k++) {
          parts.push(rnd(3000) === 0 ? keys[rnd(keys.length)]! : words[rnd(words.length)]!);
        }
        lines.push(parts.join(" "));
      }
      Deno.writeTextFileSync(join(s.dir, "turns", `turn_08${i}_reasoning.txt`), lines.join("\n"));
    }
    const q = "KÉY";
    const one = await allPages(w.deps, q, { limit: 1000, maxBytes: 1024 * 1024 * 1024 });
    assert.ok(one.hits.length > 100, `${one.hits.length} hits`);
    assertRanges(one.hits, q);
    for (const [limit, maxBytes] of [[37, undefined], [1000, 64 * 1024], [7, 150_000]] as const) {
      const paged = await allPages(w.deps, q, { limit, maxBytes });
      assert.deepEqual(paged.hits, one.hits, `limit ${limit}, maxBytes ${maxBytes}`);
    }
  }));
