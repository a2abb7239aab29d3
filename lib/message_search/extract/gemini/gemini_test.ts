/**
 * Gemini CLI extractor over real files in the exact on-disk format (the fixture writer):
 * prose lanes and never-indexed kinds, `$rewindTo` supersession, the legacy `.json` and
 * its twin, subagents, meta and locators; the sweep rules: exact append == full pass,
 * fallback to a full replay, torn tails, hostile lines, bounds, discovery refusals.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { NEVER_INDEX_MARK } from "../../../../tests/fixtures/types.ts";
import {
  buildGeminiFixture,
  geminiProjectDir,
  GeminiSessionWriter,
  geminiUuid,
  writeGeminiSession,
} from "../../../../tests/helpers/fixtures/gemini.ts";
import { hash16Of, LocatorSchema } from "../../locator.ts";
import { MessageRecordSchema } from "../../record.ts";
import type { ExtractOutcome, SessionUnit } from "../framework/plugin.ts";
import { Shard, viewOf, withDir } from "../framework/_test_shard.ts";
import { createGeminiExtractor, type GeminiLimits } from "./gemini.ts";

const now = () => ({ now: Date.now() });
const append = (path: string, s: string) => Deno.writeTextFile(path, s, { append: true });

function extractor(dir: string, limits: Partial<GeminiLimits> = {}) {
  return createGeminiExtractor({ geminiDirs: [join(dir, ".gemini")] }, { limits });
}

async function onlyUnit(dir: string): Promise<SessionUnit> {
  const d = await extractor(dir).discover();
  assert.equal(d.units.length, 1, JSON.stringify(d));
  return d.units[0]!;
}

/** A small live session (two turns) written where Gemini writes it. */
async function liveSession(dir: string) {
  let t = Date.now() - 3_600_000;
  const w = new GeminiSessionWriter({
    sessionId: geminiUuid(`live:${dir}`),
    projectRoot: "/home/dev/p",
    clock: () => (t += 1000),
  });
  w.user("question 0");
  w.gemini("answer 0");
  w.user("question 1");
  w.gemini("answer 1");
  const path = await writeGeminiSession(
    await geminiProjectDir(join(dir, ".gemini"), "/home/dev/p"),
    w,
  );
  return { w, path };
}

/** A fresh full extraction of the only unit, as a view. */
async function fullView(dir: string) {
  const o = await extractor(dir).extract(await onlyUnit(dir), null, now());
  assert.ok(o.kind === "replace");
  return viewOf(o.records, o.marks);
}

Deno.test("fixture: prose only, $rewindTo supersedes, legacy and subagent files, meta and locators", async () => {
  await withDir(async (dir) => {
    const home = await buildGeminiFixture(dir);
    const ex = home.extractor();
    const { units, skipped } = await ex.discover();
    assert.deepEqual(skipped, { legacy_twin: 1 });
    const outs = new Map<string, ExtractOutcome>();
    for (const u of units) outs.set(u.key, await ex.extract(u, null, now()));
    assert.deepEqual([...outs.keys()].sort(), Object.keys(home.expected).sort());
    for (const [key, want] of Object.entries(home.expected)) {
      const o = outs.get(key)!;
      assert.ok(o.kind === "replace", key);
      const got = viewOf(o.records, o.marks).map((r) => ({
        role: r.role,
        text: r.text,
        superseded: !r.active,
        subagent: r.subagent,
      }));
      assert.deepEqual(got, want, key);
      for (const r of o.records) {
        MessageRecordSchema.parse(r);
        assert.ok(!r.text.includes(NEVER_INDEX_MARK), r.text);
        const loc = LocatorSchema.parse(r.locator);
        assert.ok(loc.kind === "external_record_id" && loc.record_id === r.id);
        assert.equal(loc.hash, hash16Of(r.text));
        assert.match(loc.file, /^tmp\/[^/]+\/chats\/.+\.jsonl?$/);
      }
    }
    const a = outs.get(home.appendTarget.key)!;
    assert.ok(a.kind === "replace");
    assert.deepEqual(a.meta.project, "/home/dev/café shop");
    assert.equal(a.meta.title, "Café login fix");
    const sub = [...outs.values()].find((o) => o.kind === "replace" && o.meta.parent_session_id);
    assert.ok(sub?.kind === "replace");
    assert.equal(sub.meta.parent_session_id, home.appendTarget.key.slice("gemini:".length));
    const hashDir = [...outs.values()].find((o) => o.kind === "replace" && o.marks.length > 0);
    assert.ok(hashDir?.kind === "replace");
    assert.equal(hashDir.meta.project, null, "hash dirs have no .project_root");
  });
});

Deno.test("new messages, same-id upserts and a rewind in the tail append exactly (== full pass)", async () => {
  await withDir(async (dir) => {
    const { w, path } = await liveSession(dir);
    const ex = extractor(dir);
    const unit = await onlyUnit(dir);
    const shard = new Shard().apply(await ex.extract(unit, null, now()));
    assert.equal((await ex.extract(unit, shard.prior, now())).kind, "unchanged");
    let from = w.lines.length;
    const u2 = w.user("question 2 漢字");
    const g2 = w.gemini("answer 2");
    // Gemini re-appends a message with the same id (tokens, tool results): same prose.
    w.record(JSON.parse(w.lines.at(-2)!));
    w.record({ $set: { summary: "Renamed" } });
    await append(path, w.lines.slice(from).join("\n") + "\n");
    const o1 = await ex.extract(unit, shard.prior, now());
    assert.equal(o1.kind, "append");
    shard.apply(o1);
    assert.deepEqual(shard.view(), await fullView(dir));
    from = w.lines.length;
    w.rewindTo(u2);
    const u3 = w.user("question 2, asked again");
    await append(path, w.lines.slice(from).join("\n") + "\n");
    const o2 = await ex.extract(unit, shard.prior, now());
    assert.equal(o2.kind, "append");
    shard.apply(o2);
    const full = await fullView(dir);
    assert.deepEqual(shard.view(), full);
    assert.deepEqual(
      full.filter((r) => !r.active).map((r) => r.id),
      [u2, g2],
    );
    assert.ok(full.some((r) => r.id === u3 && r.active));
    assert.ok(o2.kind === "append" && o2.meta.title === "Renamed");
  });
});

Deno.test("a checkpoint, changed prose or a returning rewound id falls back to a full replay", async () => {
  await withDir(async (dir) => {
    const { w, path } = await liveSession(dir);
    const ex = extractor(dir);
    const unit = await onlyUnit(dir);
    const shard = new Shard().apply(await ex.extract(unit, null, now()));
    const first = JSON.parse(w.lines[1]!) as { id: string };
    let from = w.lines.length;
    w.rewindTo(first.id);
    await append(path, w.lines.slice(from).join("\n") + "\n");
    shard.apply(await ex.extract(unit, shard.prior, now()));
    assert.equal(shard.view().filter((r) => r.active).length, 0, "rewind to the first: all gone");
    // The rewound first message comes back (a checkpoint re-installs it): flag cleared.
    from = w.lines.length;
    w.checkpoint([JSON.parse(w.lines[1]!)]);
    await append(path, w.lines.slice(from).join("\n") + "\n");
    const o = await ex.extract(unit, shard.prior, now());
    assert.equal(o.kind, "replace");
    shard.apply(o);
    assert.deepEqual(shard.view(), await fullView(dir));
    assert.deepEqual(shard.view().filter((r) => r.active).map((r) => r.text), ["question 0"]);
  });
});

Deno.test("a torn last line waits for the next sweep and is then indexed once", async () => {
  await withDir(async (dir) => {
    const { w, path } = await liveSession(dir);
    const ex = extractor(dir);
    const unit = await onlyUnit(dir);
    const shard = new Shard().apply(await ex.extract(unit, null, now()));
    const line = JSON.stringify({
      id: w.nextId(),
      timestamp: new Date().toISOString(),
      type: "user",
      content: [{ text: "torn é漢字 line" }],
    }) + "\n";
    const bytes = new TextEncoder().encode(line);
    const cut = new TextEncoder().encode(line.split("漢")[0]!).length + 1;
    const f = await Deno.open(path, { append: true });
    try {
      await f.write(bytes.subarray(0, cut));
      const o1 = await ex.extract(unit, shard.prior, now());
      if (o1.kind === "append" || o1.kind === "replace") shard.apply(o1);
      assert.ok(!shard.view().some((r) => r.text.startsWith("torn")));
      await f.write(bytes.subarray(cut));
    } finally {
      f.close();
    }
    shard.apply(await ex.extract(unit, shard.prior, now()));
    assert.equal(shard.view().filter((r) => r.text === "torn é漢字 line").length, 1);
    assert.deepEqual(shard.view(), await fullView(dir));
  });
});

Deno.test("hostile lines are counted, never fatal, and never cost a valid message", async () => {
  await withDir(async (dir) => {
    const { w, path } = await liveSession(dir);
    const ts = new Date().toISOString();
    const valid = (text: string) =>
      JSON.stringify({ id: w.nextId(), timestamp: ts, type: "user", content: [{ text }] });
    const enc = new TextEncoder();
    const parts: Uint8Array[] = [
      enc.encode(`${valid("before")}\n`),
      enc.encode(
        `${
          JSON.stringify({
            id: w.nextId(),
            timestamp: ts,
            type: "user",
            content: [{ text: "x".repeat(9000) }],
          })
        }\n`,
      ),
      enc.encode('{"id":"'),
      new Uint8Array([0xff, 0xfe]),
      enc.encode('","type":"user","content":"bad bytes"}\n'),
      enc.encode("{this is not json\n"),
      enc.encode("[1,2,3]\n"),
      enc.encode('{"id":5,"type":"user","content":[{"text":"numeric id"}]}\n'),
      enc.encode(
        `{"id":"${w.nextId()}","type":"user","timestamp":12,"content":[{"text":"bad ts"}]}\n`,
      ),
      enc.encode(
        `{"id":"${w.nextId()}","type":"gemini","timestamp":"${ts}","content":{"oops":true}}\n`,
      ),
      enc.encode('{"$rewindTo":42}\n'),
      enc.encode(`${valid("after")}\n`),
    ];
    const f = await Deno.open(path, { append: true });
    for (const p of parts) await f.write(p);
    f.close();
    const ex = extractor(dir, { maxLineBytes: 4096 });
    const o = await ex.extract(await onlyUnit(dir), null, now());
    assert.ok(o.kind === "replace");
    const texts = o.records.map((r) => r.text);
    assert.deepEqual(texts, [
      "question 0",
      "answer 0",
      "question 1",
      "answer 1",
      "before",
      "after",
    ]);
    assert.deepEqual(o.skipped, {
      oversized_line: 1,
      // The non-UTF-8 line decodes to U+FFFD (as in every extractor) and, still JSON, reaches
      // the record checks, where its timestamp is the first thing refused.
      malformed_line: 2,
      malformed_record: 2,
      bad_timestamp: 2,
    });
  });
});

Deno.test("a file over maxFileBytes publishes nothing and counts file_too_large", async () => {
  await withDir(async (dir) => {
    await liveSession(dir);
    const o = await extractor(dir, { maxFileBytes: 200 }).extract(await onlyUnit(dir), null, now());
    assert.ok(o.kind === "replace");
    assert.equal(o.records.length, 0);
    assert.deepEqual(o.skipped, { file_too_large: 1 });
  });
});

Deno.test("a legacy .json caught mid-write keeps the last publish, then re-parses", async () => {
  await withDir(async (dir) => {
    let t = Date.now() - 60_000;
    const w = new GeminiSessionWriter({
      sessionId: geminiUuid("legacy"),
      projectRoot: "/p",
      clock: () => (t += 10),
    });
    w.user("legacy question");
    const pdir = await geminiProjectDir(join(dir, ".gemini"), "/p");
    const path = await writeGeminiSession(pdir, w, { legacyJson: true });
    const ex = extractor(dir);
    const unit = await onlyUnit(dir);
    const shard = new Shard().apply(await ex.extract(unit, null, now()));
    assert.deepEqual(shard.view().map((r) => r.text), ["legacy question"]);
    const whole = await Deno.readTextFile(path);
    await Deno.writeTextFile(path, whole.slice(0, whole.length - 40)); // A write in progress.
    assert.equal((await ex.extract(unit, shard.prior, now())).kind, "unchanged");
    w.gemini("legacy answer");
    await writeGeminiSession(pdir, w, { legacyJson: true });
    shard.apply(await ex.extract(unit, shard.prior, now()));
    assert.deepEqual(shard.view().map((r) => r.text), ["legacy question", "legacy answer"]);
  });
});

Deno.test("discovery refuses symlinks and non-files, recovers cwd from projects.json", async () => {
  await withDir(async (dir) => {
    const { path } = await liveSession(dir);
    const gemini = join(dir, ".gemini");
    // A slug dir without .project_root: projects.json names its root.
    const other = await geminiProjectDir(gemini, "/home/dev/other");
    await Deno.remove(join(other, ".project_root"));
    let t = Date.now() - 60_000;
    const w = new GeminiSessionWriter({
      sessionId: geminiUuid("other"),
      projectRoot: "/home/dev/other",
      clock: () => (t += 10),
    });
    w.user("other question");
    await writeGeminiSession(other, w);
    await Deno.symlink(path, join(other, "chats", "session-2026-01-01T00-00-deadbeef.jsonl"));
    await Deno.mkdir(join(other, "chats", "session-2026-01-01T00-00-cafecafe.jsonl"));
    await Deno.symlink(join(dir, "elsewhere"), join(gemini, "tmp", "linked"));
    const ex = extractor(dir);
    const d = await ex.discover();
    assert.equal(d.units.length, 2);
    assert.deepEqual(d.skipped, { not_a_regular_file: 2, not_a_directory: 1 });
    const u = d.units.find((x) => x.sessionId === w.sessionId)!;
    const o = await ex.extract(u, null, now());
    assert.ok(o.kind === "replace" && o.meta.project === "/home/dev/other");
  });
});
