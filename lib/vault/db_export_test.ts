/**
 * Database sessions in the vault, on real SQLite files from the fixture writers (OpenCode
 * `opencode.db`, Goose `sessions.db`): the export is deterministic and holds every
 * column; an unchanged store keeps "same"; a changed message is a new version with the
 * old one kept; deleted rows are marked gone; restore refuses in place and writes the
 * kept export byte for byte under --to (0600, never over a file); an unreadable store is
 * an error line of the keep, not a throw.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { DatabaseSync } from "node:sqlite";
import { withTempDir } from "../../tests/helpers/store_fixtures.ts";
import { openCodeContractSessions } from "../../tests/fixtures/opencode_fixture.ts";
import { writeOpenCodeDb } from "../../tests/helpers/fixtures/opencode.ts";
import { gooseContractSessions } from "../../tests/fixtures/goose_fixture.ts";
import { writeGooseDb } from "../../tests/helpers/fixtures/goose.ts";
import { closeSharedSnapshots, exportStoreSession, SQLITE_EXPORTS } from "../message_search/mod.ts";
import { NotRestorableError } from "../errors.ts";
import { mapError } from "../server/errors_map.ts";
import {
  EXPORT_ROLE,
  exportPathOf,
  type KeepUnit,
  keptUnitOf,
  latest,
  restoreSession,
  Vault,
} from "./mod.ts";

function unitOf(source: string, db: string, id: string, snapshotDir: string): KeepUnit {
  const u = keptUnitOf({
    key: `${source}:${id}`,
    source,
    sessionId: id,
    files: [{ path: db, role: "db" }, { path: `${db}-wal`, role: "wal" }],
  }, { snapshotDir });
  assert.ok(u);
  return u;
}

/** Moves the store's mtime forward (a write elsewhere in the database). */
async function bump(db: string, ms: number) {
  const t = new Date(ms);
  await Deno.utime(db, t, t);
}

Deno.test("an OpenCode export is deterministic and holds every column of its rows", async () => {
  await withTempDir(async (dir) => {
    try {
      const w = writeOpenCodeDb(join(dir, "oc"), openCodeContractSessions());
      const id = w.written[0]!.id;
      const snap = join(dir, "snap");
      const a = await exportStoreSession(w.dbPath, SQLITE_EXPORTS.opencode!, {
        sessionId: id,
        snapshotDir: snap,
      });
      closeSharedSnapshots();
      const b = await exportStoreSession(w.dbPath, SQLITE_EXPORTS.opencode!, {
        sessionId: id,
        snapshotDir: snap,
      });
      assert.ok(a.ok && b.ok);
      assert.deepEqual(a.bytes, b.bytes, "a fresh snapshot of the same rows gives the same bytes");
      const doc = JSON.parse(new TextDecoder().decode(a.bytes));
      assert.equal(doc.session_id, id);
      const db = new DatabaseSync(w.dbPath, { readOnly: true });
      try {
        for (const t of ["message", "part"]) {
          const rows = db.prepare(`SELECT * FROM ${t} WHERE session_id = ? ORDER BY id`).all(id);
          assert.equal(doc.tables[t].length, rows.length, t);
          assert.deepEqual(doc.tables[t].map((r: { id: string }) => r.id), rows.map((r) => r.id));
          assert.deepEqual(doc.tables[t][0], Object.fromEntries(Object.entries(rows[0]!)));
          assert.deepEqual(Object.keys(doc.tables[t][0]), Object.keys(rows[0]!).sort());
        }
        const s = db.prepare("SELECT * FROM session WHERE id = ?").get(id)!;
        assert.deepEqual(doc.tables.session, [Object.fromEntries(Object.entries(s))]);
      } finally {
        db.close();
      }
      console.log(
        `opencode export ${a.bytes.length} bytes, db ${(await Deno.stat(w.dbPath)).size} bytes` +
          ` + wal ${(await Deno.stat(`${w.dbPath}-wal`).catch(() => ({ size: 0 }))).size}`,
      );
      const gone = await exportStoreSession(w.dbPath, SQLITE_EXPORTS.opencode!, {
        sessionId: "ses_none",
        snapshotDir: snap,
      });
      assert.deepEqual(gone, { ok: false, reason: "missing" });
    } finally {
      closeSharedSnapshots();
    }
  });
});

Deno.test("keep: same rows are same, a changed message a new version (old kept), deleted rows gone", async () => {
  await withTempDir(async (dir) => {
    try {
      const w = writeOpenCodeDb(join(dir, "oc"), openCodeContractSessions());
      const id = w.written[0]!.id;
      const snap = join(dir, "snap");
      const vault = new Vault({ dir: join(dir, "vault") });
      const unit = () => unitOf("opencode", w.dbPath, id, snap);
      const r1 = await vault.keep([unit()]);
      assert.deepEqual([r1.new, r1.errors], [1, []]);
      const c1 = (await vault.read(`opencode:${id}`))!;
      assert.equal(c1.files.length, 1);
      assert.equal(c1.files[0]!.role, EXPORT_ROLE);
      assert.equal(c1.files[0]!.path, exportPathOf(w.dbPath, id));
      const first = latest(c1.files[0]!);

      const r2 = await vault.keep([unit()]);
      assert.deepEqual([r2.same, r2.new, r2.rewritten], [1, 0, 0], "unchanged store: same");
      // Another write moves the store's time: re-exported, the same bytes: still same.
      await bump(w.dbPath, Date.now() + 5000);
      const r3 = await vault.keep([unit()]);
      assert.deepEqual([r3.same, r3.rewritten], [1, 0]);
      assert.equal((await vault.read(`opencode:${id}`))!.files[0]!.versions.length, 1);

      const db = new DatabaseSync(w.dbPath);
      db.prepare("UPDATE message SET data = json_set(data, '$.agent', 'plan') WHERE id = ?")
        .run(w.written[0]!.messageIds[0]!);
      db.close();
      await bump(w.dbPath, Date.now() + 10_000);
      const r4 = await vault.keep([unit()]);
      assert.equal(r4.rewritten, 1);
      const c4 = (await vault.read(`opencode:${id}`))!;
      assert.equal(c4.files[0]!.versions.length, 2, "the old version is kept");
      assert.deepEqual(c4.files[0]!.versions[0]!.chunks, first.chunks);
      const text = async (v: typeof first) => {
        let s = "";
        for await (const b of vault.bytesOf(v)) s += new TextDecoder().decode(b);
        return s;
      };
      assert.ok((await text(latest(c4.files[0]!))).includes('\\"agent\\":\\"plan\\"'));
      assert.ok(!(await text(first)).includes('\\"agent\\":\\"plan\\"'));

      const del = new DatabaseSync(w.dbPath);
      del.exec("PRAGMA foreign_keys = ON");
      del.prepare("DELETE FROM part WHERE session_id = ?").run(id);
      del.prepare("DELETE FROM message WHERE session_id = ?").run(id);
      del.prepare("DELETE FROM session WHERE parent_id = ?").run(id);
      del.prepare("DELETE FROM session WHERE id = ?").run(id);
      del.close();
      await bump(w.dbPath, Date.now() + 15_000);
      const r5 = await vault.keep([unit()]);
      assert.equal(r5.gone, 1);
      const c5 = (await vault.read(`opencode:${id}`))!;
      assert.notEqual(c5.files[0]!.gone_ms, null);
      assert.equal(c5.files[0]!.versions.length, 2);

      // Restore: refused in place, written byte for byte under --to, never twice.
      await assert.rejects(
        restoreSession({ vault, catalog: c5, homes: [join(dir, "oc")] }),
        (e: Error) =>
          e instanceof NotRestorableError && /cannot be restored file by file/.test(e.message) &&
          !e.message.includes("\n"),
      );
      // POST /api/vault/restore (no --to over HTTP) answers 400 with the same sentence.
      const refusal = await restoreSession({ vault, catalog: c5, homes: [] }).catch((e) => e);
      const mapped = mapError(refusal);
      assert.equal(mapped.status, 400);
      assert.equal(mapped.body.message, (refusal as Error).message);
      const to = join(dir, "out");
      await Deno.mkdir(to);
      const files = await restoreSession({ vault, catalog: c5, to, homes: [] });
      assert.equal(files.length, 1);
      assert.equal(files[0]!.path, join(to, `opencode-${id}.json`));
      const out = await Deno.readFile(files[0]!.path);
      assert.equal(new TextDecoder().decode(out), await text(latest(c5.files[0]!)));
      assert.equal((await Deno.stat(files[0]!.path)).mode! & 0o777, 0o600);
      await assert.rejects(restoreSession({ vault, catalog: c5, to, homes: [] }), /overwrite/);
    } finally {
      closeSharedSnapshots();
    }
  });
});

Deno.test("a Goose session is kept as an export; an unreadable store is an error line", async () => {
  await withTempDir(async (dir) => {
    try {
      const w = writeGooseDb(join(dir, "g"), gooseContractSessions());
      const snap = join(dir, "snap");
      const vault = new Vault({ dir: join(dir, "vault") });
      const r = await vault.keep([unitOf("goose", w.dbPath, w.ids[0]!, snap)]);
      assert.deepEqual([r.new, r.errors], [1, []]);
      const c = (await vault.read(`goose:${w.ids[0]}`))!;
      let s = "";
      for await (const b of vault.bytesOf(latest(c.files[0]!))) s += new TextDecoder().decode(b);
      const doc = JSON.parse(s);
      assert.equal(doc.tables.sessions[0].id, w.ids[0]);
      assert.ok(doc.tables.messages.length > 0);
      console.log(`goose export ${s.length} chars, db ${(await Deno.stat(w.dbPath)).size} bytes`);

      const bad = join(dir, "bad.db");
      await Deno.writeTextFile(bad, "not a database at all, just text ".repeat(10));
      const r2 = await vault.keep([unitOf("goose", bad, "x", snap)]);
      assert.equal(r2.errors.length, 1);
      assert.match(r2.errors[0]!, /not kept \(db_not_sqlite\)/);
    } finally {
      closeSharedSnapshots();
    }
  });
});
