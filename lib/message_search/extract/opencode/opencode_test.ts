import assert from "node:assert/strict";
import { join } from "node:path";
import { DatabaseSync } from "node:sqlite";
import { sourceIoStats } from "../../io_stats.ts";
import { closeSharedSnapshots } from "../framework/sqlite_snapshot.ts";
import {
  OC_NEVER,
  openOpenCodeDb,
  richOpenCodeSession,
  writeOpenCodeDb,
  writeOpenCodeHome,
  writeOpenCodeLegacy,
} from "../../../../tests/helpers/fixtures/opencode.ts";
import { ShardModel } from "../../../../tests/helpers/fixtures/sqlite_sweep.ts";
import { createOpenCodeExtractor } from "./opencode.ts";

async function withHome(fn: (home: { data: string; state: string }) => Promise<void>) {
  const root = await Deno.makeTempDir({ prefix: "oc-test-" });
  try {
    await fn({ data: join(root, "share", "opencode"), state: join(root, "state", "sqlite") });
  } finally {
    closeSharedSnapshots();
    await Deno.remove(root, { recursive: true });
  }
}

/** Moves the store's mtimes out of the racy window, as time passing would. */
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

Deno.test("opencode: a full extraction yields exactly the prose, revert superseded, children subagent", async () => {
  await withHome(async ({ data, state }) => {
    const { expected } = writeOpenCodeHome(data);
    const model = new ShardModel();
    const r = await model.sweep(
      createOpenCodeExtractor({ dataDirs: [data] }, { snapshotDir: state }),
    );
    assert.deepEqual(viewAll(model), expected);
    const all = JSON.stringify(viewAll(model));
    assert.ok(!all.includes(OC_NEVER), "nothing never-indexed is published");
    assert.deepEqual(r.skipped, {});
    // Unicode byte-exact: NFD stays NFD, CJK intact.
    const nfd = "cafe\u0301 注文 NFD";
    const { expected: e2 } = writeOpenCodeDb(join(data, "..", "oc2"), [
      richOpenCodeSession(nfd, "ok"),
    ]);
    const m2 = new ShardModel();
    await m2.sweep(
      createOpenCodeExtractor({ dataDirs: [join(data, "..", "oc2")] }, { snapshotDir: state }),
    );
    assert.deepEqual(viewAll(m2), e2);
    assert.equal(Object.values(viewAll(m2))[0]![0]!.text, nfd);
  });
});

Deno.test("opencode: meta carries directory, generated title, and the parent of a child session", async () => {
  await withHome(async ({ data, state }) => {
    const { written } = writeOpenCodeDb(data, [
      richOpenCodeSession("first question here", "answer"),
      {
        title: "Scan (@explore subagent)",
        parent: 0,
        directory: "/w/p",
        messages: [{ role: "user", parts: [{ type: "text", text: "go" }] }],
      },
    ]);
    const ex = createOpenCodeExtractor({ dataDirs: [data] }, { snapshotDir: state });
    const units = (await ex.discover()).units;
    const metas = [];
    for (const u of units) {
      const o = await ex.extract(u, null, { now: Date.now() });
      assert.ok(o.kind === "replace");
      metas.push(o.meta);
    }
    assert.deepEqual(metas[0], {
      project: "/work/proj",
      title: "first question here",
      parent_session_id: null,
      files: [join(data, "opencode.db")],
    });
    assert.equal(metas[1]!.parent_session_id, written[0]!.id);
    assert.equal(metas[1]!.title, "Scan (@explore subagent)");
  });
});

Deno.test("opencode: the legacy JSON tree is read, and a session also in the database is read once, from the database", async () => {
  await withHome(async ({ data, state }) => {
    const legacy = writeOpenCodeLegacy(data, [
      richOpenCodeSession("legacy question", "legacy answer"),
      {
        messages: [{ role: "user", parts: [{ type: "text", text: "undone" }] }],
        revert: { message: 0 },
      },
    ]);
    const model = new ShardModel();
    const ex = createOpenCodeExtractor({ dataDirs: [data] }, { snapshotDir: state });
    await model.sweep(ex);
    assert.deepEqual(viewAll(model), legacy.expected);
    // Unchanged tree → unchanged, without reading a file.
    const opens = sourceIoStats().opens;
    const again = await model.sweep(ex);
    assert.ok(Object.values(again.kinds).every((k) => k === "unchanged"));
    assert.equal(sourceIoStats().opens, opens);
    // OpenCode imports the tree into the database with the same ids: one unit, the db's.
    const db = openOpenCodeDb(join(data, "opencode.db"));
    const sid = legacy.written[0]!.id;
    db.exec(
      `INSERT INTO project (id, worktree, time_created, time_updated, sandboxes) VALUES ('p', '/', 1, 1, '[]')`,
    );
    db.prepare(
      `INSERT INTO session (id, project_id, slug, directory, title, version, time_created, time_updated) VALUES (?, 'p', 's', '/work/proj', 't', '1', 1, 1)`,
    ).run(sid);
    const mid = legacy.written[0]!.messageIds[0]!;
    db.prepare(
      `INSERT INTO message (id, session_id, time_created, time_updated, data) VALUES (?, ?, 1, 1, '{"role":"user","time":{"created":1}}')`,
    ).run(mid, sid);
    db.prepare(
      `INSERT INTO part (id, message_id, session_id, time_created, time_updated, data) VALUES (?, ?, ?, 1, 1, '{"type":"text","text":"imported question"}')`,
    ).run(legacy.written[0]!.partIds[0]![0]!, mid, sid);
    db.close();
    const units = (await ex.discover()).units.filter((u) => u.sessionId === sid);
    assert.equal(units.length, 1);
    assert.equal((units[0]!.hint as { store: string }).store, "db");
  });
});

Deno.test("opencode: an unchanged database is 'unchanged' without opening it; a change elsewhere refreshes cursors only", async () => {
  await withHome(async ({ data, state }) => {
    const { dbPath, written } = writeOpenCodeDb(data, [
      richOpenCodeSession("alpha", "one"),
      richOpenCodeSession("beta", "two"),
    ]);
    age(dbPath);
    const ex = createOpenCodeExtractor({ dataDirs: [data] }, { snapshotDir: state });
    const model = new ShardModel();
    await model.sweep(ex);
    const opens = sourceIoStats().opens;
    const units = (await ex.discover()).units; // discovery reuses the snapshot: no open
    for (const u of units) {
      assert.equal(
        (await ex.extract(u, model.shards.get(u.key)!.prior, { now: Date.now() })).kind,
        "unchanged",
      );
    }
    assert.equal(sourceIoStats().opens, opens, "no source file opened");
    assert.deepEqual([...Deno.readDirSync(state)], [], "no copy lingers");
    // Session 2 gains a message: session 1 only refreshes its cursors (empty append).
    const db = openOpenCodeDb(dbPath);
    const ms = Date.now();
    db.prepare(
      `INSERT INTO message (id, session_id, time_created, time_updated, data) VALUES ('msg_zzzzzzzzzzzz1', ?, ?, ?, '{"role":"user","time":{"created":1}}')`,
    ).run(written[1]!.id, ms, ms);
    db.prepare(
      `INSERT INTO part (id, message_id, session_id, time_created, time_updated, data) VALUES ('prt_zzzzzzzzzzzz1', 'msg_zzzzzzzzzzzz1', ?, ?, ?, '{"type":"text","text":"gamma"}')`,
    ).run(written[1]!.id, ms, ms);
    db.close();
    age(dbPath);
    const r = await model.sweep(ex);
    assert.equal(r.kinds[`opencode:${written[0]!.id}`], "append");
    assert.equal(model.shards.get(`opencode:${written[0]!.id}`)!.records.length, 2);
    assert.equal(model.view(`opencode:${written[1]!.id}`).at(-1)!.text, "gamma");
    const r3 = await model.sweep(ex);
    assert.ok(Object.values(r3.kinds).every((k) => k === "unchanged"), JSON.stringify(r3.kinds));
  });
});

Deno.test("opencode: /undo supersedes, /redo restores, cleanup's deletions keep the text superseded", async () => {
  await withHome(async ({ data, state }) => {
    const { dbPath, written } = writeOpenCodeDb(data, [{
      messages: [
        { role: "user", parts: [{ type: "text", text: "q1" }] },
        {
          role: "assistant",
          parts: [{ type: "text", text: "a1 start" }, { type: "tool", output: "x" }, {
            type: "text",
            text: "a1 end",
          }],
        },
        { role: "user", parts: [{ type: "text", text: "q2" }] },
        { role: "assistant", parts: [{ type: "text", text: "a2" }] },
      ],
    }]);
    const w = written[0]!;
    const key = `opencode:${w.id}`;
    const ex = createOpenCodeExtractor({ dataDirs: [data] }, { snapshotDir: state });
    const model = new ShardModel();
    await model.sweep(ex);
    const flags = () => model.view(key).map((r) => `${r.text}:${r.superseded ? "S" : "A"}`);
    assert.deepEqual(flags(), ["q1:A", "a1 start:A", "a1 end:A", "q2:A", "a2:A"]);
    const db = openOpenCodeDb(dbPath);
    const setRevert = (v: unknown) =>
      db.prepare("UPDATE session SET revert = ?, time_updated = time_updated + 1 WHERE id = ?").run(
        v === null ? null : JSON.stringify(v),
        w.id,
      );
    // Undo from a part: a1's tool+end part on, and everything after.
    setRevert({ messageID: w.messageIds[1], partID: w.partIds[1]![1] });
    await model.sweep(ex);
    assert.deepEqual(flags(), ["q1:A", "a1 start:A", "a1 end:S", "q2:S", "a2:S"]);
    setRevert(null); // /redo
    await model.sweep(ex);
    assert.deepEqual(flags(), ["q1:A", "a1 start:A", "a1 end:A", "q2:A", "a2:A"]);
    setRevert({ messageID: w.messageIds[2] });
    await model.sweep(ex);
    assert.deepEqual(flags(), ["q1:A", "a1 start:A", "a1 end:A", "q2:S", "a2:S"]);
    // The next prompt's cleanup deletes the hidden rows and clears revert; a new prompt lands.
    db.prepare("DELETE FROM part WHERE message_id IN (?, ?)").run(
      w.messageIds[2]!,
      w.messageIds[3]!,
    );
    db.prepare("DELETE FROM message WHERE id IN (?, ?)").run(w.messageIds[2]!, w.messageIds[3]!);
    setRevert(null);
    const ms = Date.now();
    db.prepare(
      `INSERT INTO message (id, session_id, time_created, time_updated, data) VALUES ('msg_zzzzzzzzzzzz9', ?, ?, ?, '{"role":"user","time":{"created":1}}')`,
    ).run(w.id, ms, ms);
    db.prepare(
      `INSERT INTO part (id, message_id, session_id, time_created, time_updated, data) VALUES ('prt_zzzzzzzzzzzz9', 'msg_zzzzzzzzzzzz9', ?, ?, ?, '{"type":"text","text":"q2 again"}')`,
    ).run(w.id, ms, ms);
    db.close();
    const r = await model.sweep(ex);
    assert.equal(r.kinds[key], "append");
    const active = model.view(key).filter((x) => !x.superseded).map((x) => x.text);
    const sup = model.view(key).filter((x) => x.superseded).map((x) => x.text);
    assert.deepEqual(active, ["q1", "a1 start", "a1 end", "q2 again"]);
    assert.deepEqual(sup.sort(), ["a2", "q2"]);
  });
});

Deno.test("opencode: text streamed into a part is replaced, not duplicated", async () => {
  await withHome(async ({ data, state }) => {
    const { dbPath, written } = writeOpenCodeDb(data, [{
      messages: [
        { role: "user", parts: [{ type: "text", text: "q" }] },
        { role: "assistant", parts: [{ type: "text", text: "The answ" }] },
      ],
    }]);
    const ex = createOpenCodeExtractor({ dataDirs: [data] }, { snapshotDir: state });
    const model = new ShardModel();
    await model.sweep(ex);
    const db = openOpenCodeDb(dbPath);
    db.prepare("UPDATE part SET data = ?, time_updated = time_updated + 5 WHERE id = ?").run(
      JSON.stringify({ type: "text", text: "The answer is 42." }),
      written[0]!.partIds[1]![0]!,
    );
    db.close();
    const r = await model.sweep(ex);
    const key = `opencode:${written[0]!.id}`;
    assert.equal(r.kinds[key], "replace");
    assert.deepEqual(model.view(key).map((x) => x.text), ["q", "The answer is 42."]);
  });
});

Deno.test("opencode: a writer holding a write transaction never loses a message", async () => {
  await withHome(async ({ data, state }) => {
    // WAL (as OpenCode runs): the reader never waits; uncommitted rows are invisible.
    const { dbPath, written, db } = writeOpenCodeDb(data, [richOpenCodeSession("q", "a")], {
      keepOpen: true,
    });
    const ex = createOpenCodeExtractor({ dataDirs: [data] }, { snapshotDir: state });
    const model = new ShardModel();
    await model.sweep(ex);
    const writer = new DatabaseSync(dbPath);
    writer.exec("PRAGMA busy_timeout = 5000; BEGIN IMMEDIATE");
    const ms = Date.now();
    writer.prepare(
      `INSERT INTO message (id, session_id, time_created, time_updated, data) VALUES ('msg_zzzzzzzzzzzza', ?, ?, ?, '{"role":"user","time":{"created":1}}')`,
    ).run(written[0]!.id, ms, ms);
    writer.prepare(
      `INSERT INTO part (id, message_id, session_id, time_created, time_updated, data) VALUES ('prt_zzzzzzzzzzzza', 'msg_zzzzzzzzzzzza', ?, ?, ?, '{"type":"text","text":"late"}')`,
    ).run(written[0]!.id, ms, ms);
    const key = `opencode:${written[0]!.id}`;
    await model.sweep(ex);
    assert.deepEqual(model.view(key).map((x) => x.text), ["q", "a"]);
    writer.exec("COMMIT");
    writer.close();
    await model.sweep(ex);
    assert.deepEqual(model.view(key).map((x) => x.text), ["q", "a", "late"]);
    db!.close();
  });
  await withHome(async ({ data, state }) => {
    // Rollback journal (an old build, or WAL refused): a -journal means mid-write → db_busy.
    const { dbPath, written } = writeOpenCodeDb(data, [richOpenCodeSession("q", "a")]);
    const conv = new DatabaseSync(dbPath);
    conv.exec("PRAGMA journal_mode = DELETE");
    conv.close();
    const ex = createOpenCodeExtractor({ dataDirs: [data] }, { snapshotDir: state });
    const model = new ShardModel();
    await model.sweep(ex);
    const key = `opencode:${written[0]!.id}`;
    const before = model.shards.get(key)!.prior.cursors;
    const writer = new DatabaseSync(dbPath);
    writer.exec("PRAGMA busy_timeout = 5000; BEGIN IMMEDIATE");
    const ms = Date.now();
    writer.prepare(
      `INSERT INTO message (id, session_id, time_created, time_updated, data) VALUES ('msg_zzzzzzzzzzzzb', ?, ?, ?, '{"role":"assistant","time":{"created":1}}')`,
    ).run(written[0]!.id, ms, ms);
    writer.prepare(
      `INSERT INTO part (id, message_id, session_id, time_created, time_updated, data) VALUES ('prt_zzzzzzzzzzzzb', 'msg_zzzzzzzzzzzzb', ?, ?, ?, '{"type":"text","text":"after busy"}')`,
    ).run(written[0]!.id, ms, ms);
    const busy = await model.sweep(ex);
    assert.equal(busy.skipped.db_busy, 1);
    assert.equal(busy.discoverySkipped.db_busy, 1);
    assert.deepEqual(model.shards.get(key)!.prior.cursors, before, "cursor left as it was");
    assert.deepEqual(model.view(key).map((x) => x.text), ["q", "a"]);
    writer.exec("COMMIT");
    writer.close();
    await model.sweep(ex);
    assert.deepEqual(model.view(key).map((x) => x.text), ["q", "a", "after busy"]);
  });
});

Deno.test("opencode: nothing is ever written into the agent's directory", async () => {
  await withHome(async ({ data, state }) => {
    const { dbPath } = writeOpenCodeHome(data);
    const listing = () => [...Deno.readDirSync(data)].map((e) => e.name).sort();
    const before = listing();
    assert.deepEqual(before, ["opencode.db"]); // writer closed: WAL checkpointed away
    const stat = Deno.statSync(dbPath);
    const model = new ShardModel();
    await model.sweep(createOpenCodeExtractor({ dataDirs: [data] }, { snapshotDir: state }));
    assert.deepEqual(listing(), before, "no -shm, -wal or -journal created");
    const after = Deno.statSync(dbPath);
    assert.equal(after.mtime?.getTime(), stat.mtime?.getTime());
    assert.equal(after.size, stat.size);
    // A missing database is never created.
    const ghost = join(data, "..", "ghost");
    Deno.mkdirSync(ghost);
    const m2 = new ShardModel();
    await m2.sweep(
      createOpenCodeExtractor({ dataDirs: [ghost], dbFiles: [join(ghost, "opencode-dev.db")] }, {
        snapshotDir: state,
      }),
    );
    assert.deepEqual([...Deno.readDirSync(ghost)], []);
  });
});

Deno.test("opencode: hostile stores and rows are counted, never fatal, valid messages kept", async () => {
  await withHome(async ({ data, state }) => {
    const { dbPath, written } = writeOpenCodeDb(data, [
      richOpenCodeSession("valid question", "valid answer"),
    ]);
    const db = openOpenCodeDb(dbPath);
    const sid = written[0]!.id;
    const mid = written[0]!.messageIds[0]!;
    const ins = db.prepare(
      "INSERT INTO part (id, message_id, session_id, time_created, time_updated, data) VALUES (?, ?, ?, 1, 1, ?)",
    );
    ins.run("prt_zzzzzzzzzzzz1", mid, sid, "{not json");
    ins.run("prt_zzzzzzzzzzzz2", mid, sid, JSON.stringify({ type: "text", text: 42 }));
    ins.run("prt_zzzzzzzzzzzz3", mid, sid, new Uint8Array([1, 2, 3]));
    // Invalid UTF-8 inside the JSON text.
    db.prepare(
      "INSERT INTO part (id, message_id, session_id, time_created, time_updated, data) VALUES ('prt_zzzzzzzzzzzz4', ?, ?, 1, 1, CAST(? AS TEXT))",
    ).run(
      mid,
      sid,
      new Uint8Array([
        ...new TextEncoder().encode('{"type":"text","text":"bad '),
        0xff,
        0xfe,
        ...new TextEncoder().encode('"}'),
      ]),
    );
    db.prepare(
      "INSERT INTO message (id, session_id, time_created, time_updated, data) VALUES ('msg_zzzzzzzzzzzz1', ?, 5, 5, '[1,2]')",
    ).run(sid);
    db.close();
    const model = new ShardModel();
    const r = await model.sweep(
      createOpenCodeExtractor({ dataDirs: [data] }, { snapshotDir: state }),
    );
    assert.deepEqual(model.view(`opencode:${sid}`).map((x) => x.text), [
      "valid question",
      "valid answer",
    ]);
    assert.deepEqual(r.skipped, { part_invalid: 1, invalid_utf8: 1, message_invalid: 1 });
  });
  for (
    const [name, bytes, reason] of [
      [
        "non-SQLite bytes",
        new TextEncoder().encode("this is not a database at all, just text\n".repeat(200)),
        "db_not_sqlite",
      ],
      ["a truncated database", null, "db_corrupt"],
    ] as const
  ) {
    await withHome(async ({ data, state }) => {
      const { dbPath } = writeOpenCodeHome(data);
      if (bytes) Deno.writeFileSync(dbPath, bytes);
      else {
        const full = Deno.readFileSync(dbPath);
        Deno.writeFileSync(dbPath, full.subarray(0, 4096 + 512)); // header page + half a page
      }
      const model = new ShardModel();
      const r = await model.sweep(
        createOpenCodeExtractor({ dataDirs: [data] }, { snapshotDir: state }),
      );
      assert.equal(r.discoverySkipped[reason], 1, `${name}: ${JSON.stringify(r)}`);
      assert.equal(model.shards.size, 0);
    });
  }
  await withHome(async ({ data, state }) => {
    writeOpenCodeHome(data);
    const model = new ShardModel();
    const r = await model.sweep(
      createOpenCodeExtractor({ dataDirs: [data] }, {
        snapshotDir: state,
        limits: { maxDbBytes: 4096 },
      }),
    );
    assert.equal(r.discoverySkipped.db_too_large, 1);
  });
});

Deno.test("opencode: a torn WAL tail is ignored, committed frames are read", async () => {
  await withHome(async ({ data, state }) => {
    const { dbPath, written, db } = writeOpenCodeDb(data, [richOpenCodeSession("q", "a")], {
      keepOpen: true,
    });
    db!.exec("PRAGMA wal_autocheckpoint = 0");
    const ms = Date.now();
    db!.prepare(
      `INSERT INTO message (id, session_id, time_created, time_updated, data) VALUES ('msg_zzzzzzzzzzzzc', ?, ?, ?, '{"role":"user","time":{"created":1}}')`,
    ).run(written[0]!.id, ms, ms);
    db!.prepare(
      `INSERT INTO part (id, message_id, session_id, time_created, time_updated, data) VALUES ('prt_zzzzzzzzzzzzc', 'msg_zzzzzzzzzzzzc', ?, ?, ?, '{"type":"text","text":"in the wal"}')`,
    ).run(written[0]!.id, ms, ms);
    // A half-written frame after the last commit: garbage appended to the WAL.
    const f = Deno.openSync(`${dbPath}-wal`, { append: true });
    f.writeSync(new Uint8Array(3000).fill(0xab));
    f.close();
    const model = new ShardModel();
    await model.sweep(createOpenCodeExtractor({ dataDirs: [data] }, { snapshotDir: state }));
    assert.deepEqual(model.view(`opencode:${written[0]!.id}`).map((x) => x.text), [
      "q",
      "a",
      "in the wal",
    ]);
    db!.close();
  });
});

Deno.test("opencode: a backup copy never shadows the live database; empty and hostile databases are skipped, named and held", async () => {
  await withHome(async ({ data, state }) => {
    const w = writeOpenCodeDb(data, [richOpenCodeSession("live question", "live answer")]);
    const key = Object.keys(w.expected)[0]!;
    const id = key.slice("opencode:".length);
    // The backup holds the session as it was; the live one moves on after it.
    const src = new DatabaseSync(w.dbPath);
    src.exec(`VACUUM INTO '${join(data, "opencode-backup.db")}'`);
    src.exec("UPDATE session SET time_updated = time_updated + 5000");
    src.close();
    // Newer by mtime and first by name: only content may decide.
    const later = new Date(Date.now() + 60_000);
    Deno.utimeSync(join(data, "opencode-backup.db"), later, later);
    Deno.writeFileSync(join(data, "opencode-empty.db"), new Uint8Array());
    const evil = new DatabaseSync(join(data, "opencode-evil.db"));
    evil.exec(`CREATE TABLE message (id TEXT, session_id TEXT, data TEXT);
      CREATE TABLE part (id TEXT, message_id TEXT, session_id TEXT, data TEXT);
      CREATE VIEW session AS WITH RECURSIVE c(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM c)
        SELECT 'ses_' || n AS id FROM c;`);
    evil.close();
    const ex = createOpenCodeExtractor({ dataDirs: [data] }, { snapshotDir: state });
    const d = await ex.discover();
    const unit = d.units.find((u) => u.sessionId === id)!;
    assert.equal((unit.hint as { db: string }).db, w.dbPath, "the live copy owns the session");
    assert.equal(d.skipped.duplicate_session_in_another_db, 1);
    assert.equal(d.skipped.db_empty, 1);
    assert.equal(d.skipped.db_hostile, 1);
    assert.deepEqual(d.held?.sort(), [
      join(data, "opencode-empty.db"),
      join(data, "opencode-evil.db"),
    ]);
    assert.equal(d.notes?.length, 2);
    assert.match(d.notes!.join("\n"), /opencode-empty\.db": an empty file/);
    assert.match(d.notes!.join("\n"), /opencode-evil\.db": its tables are views/);
    // Equal content: the database written last, then opencode.db before a channel copy.
    const { livelier } = await import("./opencode_discover.ts");
    const a = { db: "/d/opencode.db", updated: 5, mtimeMs: 1 };
    assert.ok(livelier({ ...a, updated: 6 }, a));
    assert.ok(livelier({ db: "/d/opencode-x.db", updated: 5, mtimeMs: 2 }, a));
    assert.ok(livelier(a, { db: "/d/opencode-x.db", updated: 5, mtimeMs: 1 }));
  });
});
