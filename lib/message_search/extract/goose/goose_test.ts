import assert from "node:assert/strict";
import { join } from "node:path";
import { DatabaseSync } from "node:sqlite";
import { sourceIoStats } from "../../io_stats.ts";
import { closeSharedSnapshots } from "../framework/sqlite_snapshot.ts";
import {
  GOOSE_NEVER,
  gooseMessageIds,
  openGooseDb,
  replaceGooseConversation,
  richGooseSession,
  writeGooseDb,
  writeGooseHome,
  writeGooseLegacy,
} from "../../../../tests/helpers/fixtures/goose.ts";
import { ShardModel } from "../../../../tests/helpers/fixtures/sqlite_sweep.ts";
import { createGooseExtractor } from "./goose.ts";
import { stripTagChars } from "./goose_prose.ts";

async function withHome(fn: (home: { data: string; state: string }) => Promise<void>) {
  const root = await Deno.makeTempDir({ prefix: "goose-test-" });
  try {
    await fn({ data: join(root, "share", "goose"), state: join(root, "state", "sqlite") });
  } finally {
    closeSharedSnapshots();
    await Deno.remove(root, { recursive: true });
  }
}

function age(dbPath: string, ms = 60_000): void {
  const t = new Date(Date.now() - ms);
  for (const f of [dbPath, `${dbPath}-wal`]) {
    try {
      Deno.utimeSync(f, t, t);
    } catch (err) {
      if (!(err instanceof Deno.errors.NotFound)) throw err;
    }
  }
}

function viewAll(model: ShardModel) {
  const out: Record<string, ReturnType<ShardModel["view"]>> = {};
  for (const key of model.shards.keys()) out[key] = model.view(key);
  return out;
}

for (const schemaVersion of [13, 5]) {
  Deno.test(`goose: a full extraction (schema v${schemaVersion}) yields exactly the visible prose`, async () => {
    await withHome(async ({ data, state }) => {
      const { expected, ids } = writeGooseHome(data, { schemaVersion });
      const model = new ShardModel();
      const r = await model.sweep(
        createGooseExtractor({ dataDirs: [data] }, { snapshotDir: state }),
      );
      assert.deepEqual(viewAll(model), expected);
      assert.ok(!JSON.stringify(viewAll(model)).includes(GOOSE_NEVER));
      assert.equal(Object.keys(r.kinds).length, ids.length - 1, "the hidden session is not listed");
      assert.deepEqual(r.skipped, {});
      const tagged = Object.values(viewAll(model)).flat().find((x) => x.text.startsWith("hidden"));
      assert.equal(tagged?.text, "hidden tags\n\nsecond item");
    });
  });
}

Deno.test("goose: times are seconds ×1000, ids are message_id, meta has the working dir", async () => {
  await withHome(async ({ data, state }) => {
    const now = Date.UTC(2026, 10, 30, 12, 0, 0);
    const { ids } = writeGooseDb(data, [{
      name: "Perf",
      workingDir: "/w/x",
      messages: [{ role: "user", content: [{ type: "text", text: "hi" }] }],
    }], { now });
    const ex = createGooseExtractor({ dataDirs: [data] }, { snapshotDir: state });
    const [unit] = (await ex.discover()).units;
    const o = await ex.extract(unit!, null, { now: Date.now() });
    assert.ok(o.kind === "replace");
    assert.equal(o.records[0]!.ts_ms, Math.floor((now - 3_600_000) / 1000) * 1000);
    assert.ok(o.records[0]!.id.startsWith("msg_"));
    assert.deepEqual(o.meta, {
      project: "/w/x",
      title: "Perf",
      parent_session_id: null,
      files: [join(data, "sessions", "sessions.db")],
    });
    assert.equal(unit!.key, `goose:${ids[0]}`);
    assert.equal(o.records[0]!.locator.kind, "external_record_id");
  });
});

for (const schemaVersion of [13, 5]) {
  Deno.test(`goose: replace_conversation (v${schemaVersion}) keeps vanished text superseded, never duplicates kept rows`, async () => {
    await withHome(async ({ data, state }) => {
      const msgs = [
        { role: "user" as const, content: [{ type: "text" as const, text: "q1" }] },
        { role: "assistant" as const, content: [{ type: "text" as const, text: "a1" }] },
        { role: "user" as const, content: [{ type: "text" as const, text: "q2 dropped" }] },
        { role: "assistant" as const, content: [{ type: "text" as const, text: "a2 dropped" }] },
      ];
      const { dbPath, ids } = writeGooseDb(data, [{ messages: msgs }], { schemaVersion });
      const key = `goose:${ids[0]}`;
      const ex = createGooseExtractor({ dataDirs: [data] }, { snapshotDir: state });
      const model = new ShardModel();
      await model.sweep(ex);
      const db = openGooseDb(dbPath);
      const keep = gooseMessageIds(db, ids[0]!);
      // Rows re-inserted with new rowids: unchanged content → nothing new.
      replaceGooseConversation(db, ids[0]!, msgs, { keepIds: keep });
      await model.sweep(ex);
      assert.deepEqual(model.view(key).map((x) => `${x.text}:${x.superseded ? "S" : "A"}`), [
        "q1:A",
        "a1:A",
        "q2 dropped:A",
        "a2 dropped:A",
      ]);
      // An edit: the last exchange is dropped and a new one takes its place.
      replaceGooseConversation(db, ids[0]!, [msgs[0]!, msgs[1]!, {
        role: "user",
        content: [{ type: "text", text: "q2 edited" }],
      }], { keepIds: keep.slice(0, 2) });
      db.close();
      await model.sweep(ex);
      const v = model.view(key);
      assert.deepEqual(v.filter((x) => !x.superseded).map((x) => x.text), [
        "q1",
        "a1",
        "q2 edited",
      ]);
      assert.deepEqual(v.filter((x) => x.superseded).map((x) => x.text).sort(), [
        "a2 dropped",
        "q2 dropped",
      ]);
      assert.equal(v.length, 5);
    });
  });
}

Deno.test("goose: an unchanged database is 'unchanged' without opening it", async () => {
  await withHome(async ({ data, state }) => {
    const { dbPath } = writeGooseHome(data);
    age(dbPath);
    const ex = createGooseExtractor({ dataDirs: [data] }, { snapshotDir: state });
    const model = new ShardModel();
    await model.sweep(ex);
    const opens = sourceIoStats().opens;
    const r = await model.sweep(ex);
    assert.ok(Object.values(r.kinds).every((k) => k === "unchanged"));
    assert.equal(sourceIoStats().opens, opens);
    assert.deepEqual([...Deno.readDirSync(join(data, "sessions"))].map((e) => e.name), [
      "sessions.db",
    ]);
  });
});

Deno.test("goose: a writer holding a write transaction never loses a message", async () => {
  await withHome(async ({ data, state }) => {
    const { dbPath, ids, db } = writeGooseDb(data, [richGooseSession("q", "a")], {
      keepOpen: true,
    });
    const key = `goose:${ids[0]}`;
    const ex = createGooseExtractor({ dataDirs: [data] }, { snapshotDir: state });
    const model = new ShardModel();
    await model.sweep(ex);
    const writer = new DatabaseSync(dbPath);
    writer.exec("PRAGMA busy_timeout = 5000; BEGIN IMMEDIATE");
    writer.prepare(
      `INSERT INTO messages (session_id, role, content_json, created_timestamp, metadata_json, message_id) VALUES (?, 'user', '[{"type":"text","text":"late"}]', 1, NULL, 'msg_late')`,
    ).run(ids[0]!);
    await model.sweep(ex);
    assert.deepEqual(model.view(key).map((x) => x.text), ["q", "a"]);
    writer.exec("COMMIT");
    writer.close();
    await model.sweep(ex);
    assert.deepEqual(model.view(key).map((x) => x.text), ["q", "a", "late"]);
    db!.close();
  });
});

Deno.test("goose: legacy JSONL sessions are read; the database copy wins; a torn tail waits", async () => {
  await withHome(async ({ data, state }) => {
    const { ids, expected } = writeGooseDb(data, [richGooseSession("db q", "db a")]);
    const dup = writeGooseLegacy(data, ids[0]!, richGooseSession("legacy dup", "x"));
    const only = writeGooseLegacy(data, "my-old-session", richGooseSession("legacy q", "legacy a"));
    const model = new ShardModel();
    const ex = createGooseExtractor({ dataDirs: [data] }, { snapshotDir: state });
    await model.sweep(ex);
    assert.deepEqual(viewAll(model), { ...expected, "goose:my-old-session": only.expected });
    void dup;
    // A torn line (no newline yet) is not read; once complete it is.
    Deno.writeTextFileSync(
      only.path,
      JSON.stringify({ role: "user", created: 1, content: [{ type: "text", text: "tail" }] }),
      { append: true },
    );
    await model.sweep(ex);
    assert.equal(model.view("goose:my-old-session").length, 2);
    Deno.writeTextFileSync(only.path, "\n", { append: true });
    await model.sweep(ex);
    assert.deepEqual(model.view("goose:my-old-session").map((x) => x.text), [
      "legacy q",
      "legacy a",
      "tail",
    ]);
  });
});

Deno.test("goose: hostile rows and lines are counted, never fatal, valid messages kept", async () => {
  await withHome(async ({ data, state }) => {
    const { dbPath, ids } = writeGooseDb(data, [richGooseSession("valid q", "valid a")]);
    const db = openGooseDb(dbPath);
    const ins = db.prepare(
      "INSERT INTO messages (session_id, role, content_json, created_timestamp, metadata_json) VALUES (?, ?, ?, 1, ?)",
    );
    ins.run(ids[0]!, "user", "{not json", null);
    ins.run(ids[0]!, "user", JSON.stringify({ type: "text", text: "object not array" }), null);
    ins.run(
      ids[0]!,
      "user",
      JSON.stringify(["a string item", 7, { type: "text", text: 42 }]),
      "[]",
    );
    ins.run(ids[0]!, "robot", JSON.stringify([{ type: "text", text: "bad role" }]), null);
    ins.run(ids[0]!, "user", new Uint8Array([1, 2, 3]), null);
    db.prepare(
      "INSERT INTO messages (session_id, role, content_json, created_timestamp) VALUES (?, 'user', CAST(? AS TEXT), 1)",
    ).run(
      ids[0]!,
      new Uint8Array([
        ...new TextEncoder().encode('[{"type":"text","text":"bad '),
        0xc3,
        0x28,
        ...new TextEncoder().encode('"}]'),
      ]),
    );
    db.close();
    const legacy = join(data, "sessions", "old.jsonl");
    Deno.writeFileSync(
      legacy,
      new Uint8Array([
        ...new TextEncoder().encode(
          '{"working_dir":"/w"}\n{"role":"user","created":1,"content":[{"type":"text","text":"ok line"}]}\n{garbage\n',
        ),
        0xff,
        0xfe,
        0x0a,
        ...new TextEncoder().encode('{"role":"user","content":"not an array"}\n'),
      ]),
    );
    const model = new ShardModel();
    const r = await model.sweep(createGooseExtractor({ dataDirs: [data] }, { snapshotDir: state }));
    assert.deepEqual(model.view(`goose:${ids[0]}`).map((x) => x.text), ["valid q", "valid a"]);
    assert.deepEqual(model.view("goose:old").map((x) => x.text), ["ok line"]);
    assert.deepEqual(r.skipped, {
      // db: not JSON, not an array, a blob, a bad role; legacy: content not an array.
      message_invalid: 5,
      content_invalid: 1,
      invalid_utf8: 2,
      malformed_line: 1,
    }, JSON.stringify(r.skipped));
  });
  await withHome(async ({ data, state }) => {
    const { dbPath } = writeGooseHome(data);
    Deno.writeFileSync(dbPath, Deno.readFileSync(dbPath).subarray(0, 5000));
    const r = await new ShardModel().sweep(
      createGooseExtractor({ dataDirs: [data] }, { snapshotDir: state }),
    );
    assert.equal(r.discoverySkipped.db_corrupt, 1, JSON.stringify(r));
  });
});

Deno.test("goose: tag characters are stripped, other astral text kept", () => {
  assert.equal(stripTagChars("a\u{E0001}b\u{E007F}c 😀 𠀋"), "abc 😀 𠀋");
});
