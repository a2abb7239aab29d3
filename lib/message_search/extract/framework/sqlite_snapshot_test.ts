import assert from "node:assert/strict";
import { join } from "node:path";
import { DatabaseSync } from "node:sqlite";
import { writeGooseHome } from "../../../../tests/helpers/fixtures/goose.ts";
import { writeOpenCodeHome } from "../../../../tests/helpers/fixtures/opencode.ts";
import { openSqliteSnapshot, sameStoreSig, statSqliteStore } from "./sqlite_snapshot.ts";

const REPO = new URL("../../../../", import.meta.url).pathname;
const DENO = Deno.execPath();

async function withDir(fn: (dir: string) => Promise<void> | void) {
  const dir = await Deno.makeTempDir({ prefix: "sqlite-snap-" });
  try {
    await fn(dir);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

function names(dir: string): string[] {
  return [...Deno.readDirSync(dir)].map((e) => e.name).sort();
}

function liveDb(dir: string): DatabaseSync {
  const db = new DatabaseSync(join(dir, "live.db"));
  db.exec("PRAGMA journal_mode = WAL; PRAGMA wal_autocheckpoint = 0; CREATE TABLE t (x TEXT)");
  db.exec("INSERT INTO t VALUES ('one'), ('two')");
  return db;
}

Deno.test("openSqliteSnapshot reads a live WAL database, touches nothing beside it, leaves no copy", async () => {
  await withDir(async (dir) => {
    const agent = join(dir, "agent");
    const state = join(dir, "state");
    Deno.mkdirSync(agent);
    const db = liveDb(agent);
    const before = names(agent);
    assert.deepEqual(before, ["live.db", "live.db-shm", "live.db-wal"]);
    const r = await openSqliteSnapshot(join(agent, "live.db"), { tempDir: state });
    assert.ok(r.ok);
    assert.deepEqual(r.snapshot.all("SELECT x FROM t ORDER BY x"), {
      ok: true,
      rows: [{ x: "one" }, { x: "two" }].map((o) => Object.assign(Object.create(null), o)),
    });
    assert.deepEqual(names(state), [], "the copy is unlinked while open");
    assert.deepEqual(r.snapshot.all("SELECT nope FROM t").ok, false);
    assert.deepEqual(r.snapshot.all("SELECT * FROM missing"), { ok: false, reason: "db_schema" });
    assert.deepEqual([...r.snapshot.columns("t")], ["x"]);
    assert.deepEqual([...r.snapshot.columns("missing")], []);
    r.snapshot.close();
    assert.deepEqual(names(agent), before);
    // The writer still works and nothing it wrote is lost.
    db.exec("INSERT INTO t VALUES ('three')");
    const r2 = await openSqliteSnapshot(join(agent, "live.db"), { tempDir: state });
    assert.ok(r2.ok);
    assert.equal(
      (r2.snapshot.all("SELECT count(*) AS n FROM t") as { ok: true; rows: { n: number }[] })
        .rows[0]!.n,
      3,
    );
    r2.snapshot.close();
    db.close();
  });
});

Deno.test("openSqliteSnapshot refuses what it must, as typed reasons", async () => {
  await withDir(async (dir) => {
    const state = join(dir, "state");
    const o = { tempDir: state, retries: 1, retryDelayMs: 1 };
    assert.deepEqual(await openSqliteSnapshot(join(dir, "nope.db"), o), {
      ok: false,
      reason: "db_missing",
    });
    assert.deepEqual(names(dir), ["state"], "a missing database is never created");
    Deno.writeTextFileSync(join(dir, "text.db"), "hello, not sqlite".repeat(20));
    assert.deepEqual(await openSqliteSnapshot(join(dir, "text.db"), o), {
      ok: false,
      reason: "db_not_sqlite",
    });
    // A 0-byte file (what `sqlite3 new.db` leaves) is retried, then named empty, not busy
    // (busy would hold the whole source, H1).
    Deno.writeFileSync(join(dir, "empty.db"), new Uint8Array());
    assert.deepEqual(await openSqliteSnapshot(join(dir, "empty.db"), o), {
      ok: false,
      reason: "db_empty",
    });
    const db = liveDb(dir);
    db.close();
    Deno.symlinkSync(join(dir, "live.db"), join(dir, "link.db"));
    assert.deepEqual(await openSqliteSnapshot(join(dir, "link.db"), o), {
      ok: false,
      reason: "db_refused",
    });
    assert.deepEqual(await openSqliteSnapshot(join(dir, "live.db"), { ...o, maxBytes: 100 }), {
      ok: false,
      reason: "db_too_large",
    });
    // Rollback-journal mode with a write in flight: a -journal beside it → busy.
    const w = new DatabaseSync(join(dir, "live.db"));
    w.exec("PRAGMA journal_mode = DELETE; BEGIN IMMEDIATE; INSERT INTO t VALUES ('x')");
    assert.equal(statSqliteStore(join(dir, "live.db")) !== null, true);
    assert.deepEqual(await openSqliteSnapshot(join(dir, "live.db"), o), {
      ok: false,
      reason: "db_busy",
    });
    w.exec("COMMIT");
    w.close();
    const ok = await openSqliteSnapshot(join(dir, "live.db"), o);
    assert.ok(ok.ok);
    ok.snapshot.close();
    assert.deepEqual(names(state), []);
  });
});

Deno.test("statSqliteStore signatures change with a committed write and not otherwise", async () => {
  await withDir((dir) => {
    const db = liveDb(dir);
    const a = statSqliteStore(join(dir, "live.db"));
    const b = statSqliteStore(join(dir, "live.db"));
    assert.ok(a && a !== "refused" && sameStoreSig(a, b as typeof a));
    db.exec("INSERT INTO t VALUES ('z')");
    const c = statSqliteStore(join(dir, "live.db"));
    assert.ok(!sameStoreSig(a as never, c as never));
    db.close();
  });
});

Deno.test("the SQLite sources run under the locked profile (read homes + state, write state only, no ffi)", async () => {
  await withDir(async (dir) => {
    const oc = join(dir, "home", ".local", "share", "opencode");
    const goose = join(dir, "home", ".local", "share", "goose");
    const state = join(dir, "state");
    Deno.mkdirSync(state);
    const ocw = writeOpenCodeHome(oc, { keepOpen: true });
    const gw = writeGooseHome(goose, { keepOpen: true });
    const ocBefore = names(oc);
    const gBefore = names(join(goose, "sessions"));
    const out = await new Deno.Command(DENO, {
      args: [
        "run",
        "--no-prompt",
        `--allow-read=${oc},${goose},${state},${REPO}`,
        `--allow-write=${state}`,
        join(REPO, "tests/helpers/fixtures/sqlite_locked_child.ts"),
        oc,
        goose,
        state,
      ],
      cwd: REPO,
      env: { NO_COLOR: "1", DENO_NO_UPDATE_CHECK: "1" },
      stdout: "piped",
      stderr: "piped",
    }).output();
    const stderr = new TextDecoder().decode(out.stderr);
    assert.equal(out.code, 0, stderr);
    const r = JSON.parse(new TextDecoder().decode(out.stdout));
    const want = Object.values(ocw.expected).flat().length +
      Object.values(gw.expected).flat().length;
    assert.equal(r.records, want);
    assert.deepEqual(r.skipped, {});
    assert.deepEqual(names(oc), ocBefore);
    assert.deepEqual(names(join(goose, "sessions")), gBefore);
    assert.deepEqual(names(join(state, "sqlite")), []);
    ocw.db!.close();
    gw.db!.close();
  });
});

Deno.test("a snapshot refuses views, virtual tables and generated columns, and its connection refuses recursion", async () => {
  await withDir(async (dir) => {
    const path = join(dir, "hostile.db");
    const w = new DatabaseSync(path);
    w.exec(`CREATE TABLE plain (id TEXT);
      INSERT INTO plain VALUES ('a');
      CREATE VIEW looped AS WITH RECURSIVE c(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM c)
        SELECT n AS id FROM c;
      CREATE VIEW crossed AS SELECT a.id FROM plain a, plain b;
      CREATE TABLE gen (id TEXT, big TEXT AS (printf('%.*c', 100000000, 'x')));
      CREATE VIRTUAL TABLE vt USING fts5(id);`);
    w.close();
    const r = await openSqliteSnapshot(path, { tempDir: join(dir, "state") });
    assert.ok(r.ok);
    const s = r.snapshot;
    try {
      assert.equal(s.refusal(["plain"]), null);
      assert.equal(s.refusal(["missing_table"]), null, "absence is the schema check's");
      for (const t of ["looped", "crossed", "gen", "vt"]) {
        assert.equal(s.refusal(["plain", t]), "db_hostile", t);
      }
      // Even unchecked, the connection refuses a view's body and any recursive CTE at once.
      const t0 = Date.now();
      assert.deepEqual(s.all("SELECT count(*) FROM looped"), { ok: false, reason: "db_hostile" });
      assert.deepEqual(s.all("SELECT count(*) FROM crossed"), { ok: false, reason: "db_hostile" });
      assert.deepEqual(
        s.all(
          "WITH RECURSIVE c(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM c) SELECT count(*) FROM c",
        ),
        { ok: false, reason: "db_hostile" },
      );
      assert.ok(Date.now() - t0 < 1_000, "refused at prepare time, not after running");
      const plain = s.all("SELECT id FROM plain");
      assert.ok(plain.ok);
      assert.deepEqual(plain.rows.map((r) => r.id), ["a"]);
    } finally {
      s.close();
    }
  });
});
