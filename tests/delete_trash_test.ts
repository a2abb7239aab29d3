/**
 * Nothing is destroyed by accident (issue 14): `intendant delete` refuses short prefixes
 * and unconfirmed deletes, moves the session to `<state-root>/trash/` (tombstone first),
 * `intendant trash` lists it, `intendant restore` brings it back into the catalog and,
 * after a sweep, into search; the trash GC removes entries after 14 days and not before;
 * every crash state between two steps recovers; the API does the same through createApp.
 * Real files, the real program (spawned), a real store; no mocks.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { resolveConfig } from "../lib/config.ts";
import { createMessageIndex, type Store } from "../lib/message_search/mod.ts";
import { runCli } from "../lib/cli/mod.ts";
import {
  deleteNativeSession,
  gcTrash,
  restoreNativeSession,
  TRASH_KEEP_MS,
  type TrashDeps,
} from "../lib/catalog/mod.ts";
import { MAIN, runIntendant } from "./helpers/cli.ts";
import { writeNativeSession } from "./helpers/native_corpus.ts";
import { DENO, fakeIo, hermeticEnv, withTempDir } from "./helpers/temp.ts";
import { buildWorld, PORT } from "./helpers/world.ts";
import { startDaemon } from "../lib/server/mod.ts";

const DAY_MS = 86_400_000;

function cfgFor(root: string) {
  return resolveConfig(hermeticEnv(root), { cwd: root });
}

async function trashDeps(root: string, now?: () => number): Promise<TrashDeps> {
  const cfg = cfgFor(root);
  const { store } = await createMessageIndex(cfg);
  return { stateRoot: cfg.stateRoot, logsDir: cfg.logsDir, store, now };
}

function exists(path: string): boolean {
  try {
    Deno.lstatSync(path);
    return true;
  } catch {
    return false;
  }
}

function trashNames(root: string): string[] {
  const dir = join(cfgFor(root).stateRoot, "trash");
  return exists(dir) ? [...Deno.readDirSync(dir)].map((e) => e.name).sort() : [];
}

async function tombstoned(store: Store, id: string): Promise<boolean> {
  return (await store.readManifest()).tombstones[`intendant:${id}`] !== undefined;
}

/** The real program with stdin at /dev/null (never a terminal, whoever runs the tests). */
async function runNoTty(root: string, args: string[]) {
  const out = await new Deno.Command(DENO, {
    args: ["run", "-A", "--quiet", MAIN, ...args],
    cwd: root,
    clearEnv: true,
    env: { PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin", NO_COLOR: "1", ...hermeticEnv(root) },
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).output();
  const dec = new TextDecoder();
  return { code: out.code, stdout: dec.decode(out.stdout), stderr: dec.decode(out.stderr) };
}

Deno.test("delete refuses a prefix under 8 characters, listing its matches sanitized", () =>
  withTempDir(async (root) => {
    const logs = cfgFor(root).logsDir;
    const hostile = "Evil \x1b]0;pwned\x07title\x1b[2J here";
    const a = await writeNativeSession(logs, { turns: 1, task: hostile });
    const b = await writeNativeSession(logs, { turns: 1, task: "Second session" });
    const prefix = a.id.slice(0, 1);
    // Refused before anything else, --yes or not (here without: the old code deleted at once).
    const r = await runNoTty(root, ["delete", prefix]);
    assert.equal(r.code, 2, r.stderr);
    assert.match(r.stderr, /Refusing to delete by the prefix ".": give the full id or at least 8/);
    assert.ok(r.stderr.includes(a.id), r.stderr);
    assert.equal(r.stderr.includes(b.id), b.id.startsWith(prefix));
    assert.ok(r.stderr.includes("Evil title here"), r.stderr);
    // deno-lint-ignore no-control-regex -- the point: none of these may reach the terminal
    assert.ok(!/[\x00-\x08\x0b-\x1f\x7f]/.test(r.stderr), "no control characters printed");
    assert.ok(exists(a.dir) && exists(b.dir));
    assert.deepEqual(trashNames(root), []);
    // 8 characters of a unique id are enough (here with --yes, as a script would).
    const ok = await runNoTty(root, ["delete", a.id.slice(0, 8), "--yes"]);
    assert.equal(ok.code, 0, ok.stderr);
    assert.ok(!exists(a.dir));
  }));

Deno.test("without a terminal, delete needs --yes and touches nothing", () =>
  withTempDir(async (root) => {
    const s = await writeNativeSession(cfgFor(root).logsDir, { turns: 1 });
    const r = await runNoTty(root, ["delete", s.id]);
    assert.equal(r.code, 2);
    assert.equal(r.stderr.trimEnd().split("\n").length, 1, r.stderr);
    assert.match(r.stderr, /pass --yes/);
    assert.ok(exists(s.dir));
    assert.deepEqual(trashNames(root), []);
    const { store } = await createMessageIndex(cfgFor(root));
    assert.equal(await tombstoned(store, s.id), false);
  }));

Deno.test("on a terminal, delete shows the session and moves it only after y", () =>
  withTempDir(async (root) => {
    const cfg = cfgFor(root);
    const s = await writeNativeSession(cfg.logsDir, {
      turns: 2,
      task: "Wombat tunnel survey",
      project: "/home/dev/burrow",
    });
    const answers = ["n", "yes"];
    const io = {
      ...fakeIo(hermeticEnv(root), root),
      stdinIsTty: true,
      readLine: () => Promise.resolve(answers.shift() ?? null),
    };
    assert.equal(await runCli(["delete", s.id], io), 1, io.err.join(""));
    const shown = io.err.join("");
    for (const want of [s.id, "Wombat tunnel survey", "/home/dev/burrow", "completed", "UTC"]) {
      assert.ok(shown.includes(want), `${want} in ${shown}`);
    }
    assert.match(shown, /messages\s+3\n/);
    assert.match(shown, /size\s+\d+(\.\d)? (B|KiB|MiB)\n/);
    assert.match(shown, /Move this session to the trash\? \[y\/N\] /);
    assert.match(shown, /Nothing deleted/);
    assert.ok(exists(s.dir), "n keeps the session");
    assert.deepEqual(trashNames(root), []);

    io.err.length = 0;
    assert.equal(await runCli(["delete", s.id.slice(0, 8)], io), 0, io.err.join(""));
    assert.ok(!exists(s.dir));
    const [entry] = trashNames(root);
    assert.match(entry!, new RegExp(`^\\d{13}-${s.id}$`));
    assert.ok(exists(join(cfg.stateRoot, "trash", entry!, "session.jsonl")), "moved whole");
    const { store } = await createMessageIndex(cfg);
    assert.equal(await tombstoned(store, s.id), true);
    assert.match(io.out.join(""), new RegExp(`intendant restore ${s.id}`));
  }));

Deno.test("trash lists the deleted session; restore brings it back into sessions and search", () =>
  withTempDir(async (root) => {
    const cfg = cfgFor(root);
    const s = await writeNativeSession(cfg.logsDir, { turns: 1, task: "Quokka habitat notes" });
    const keep = await writeNativeSession(cfg.logsDir, { turns: 1, task: "Kept session" });
    assert.equal((await runIntendant(root, ["index"])).code, 0);
    assert.equal((await runIntendant(root, ["trash"])).stdout, "The trash is empty\n");
    for (const c of ["trash", "restore"]) {
      assert.match(
        (await runIntendant(root, [c, "--help"])).stdout,
        new RegExp(`^usage: intendant ${c}`),
      );
    }
    const found = async () => (await runIntendant(root, ["search", "quokka", "--json"])).stdout;
    assert.ok((await found()).includes(s.id));
    assert.equal((await runNoTty(root, ["delete", s.id, "--yes"])).code, 0);
    assert.ok(!(await found()).includes(s.id), "gone from search at once");

    const human = await runIntendant(root, ["trash"]);
    assert.equal(human.code, 0);
    assert.match(human.stdout, new RegExp(`${s.id}  Quokka habitat notes`));
    const listed = JSON.parse((await runIntendant(root, ["trash", "--json"])).stdout);
    assert.equal(listed.entries.length, 1);
    const e = listed.entries[0];
    assert.equal(e.session_id, s.id);
    assert.equal(e.title, "Quokka habitat notes");
    assert.equal(e.expires_at_ms - e.deleted_at_ms, 14 * DAY_MS);
    assert.ok(e.size_bytes > 0);
    const sessions = async () => (await runIntendant(root, ["sessions", "--json"])).stdout;
    assert.ok(!(await sessions()).includes(s.id));

    const short = await runIntendant(root, ["restore", s.id.slice(0, 4)]);
    assert.equal(short.code, 2);
    assert.ok(short.stderr.includes(s.id));
    const r = await runIntendant(root, ["restore", s.id.slice(0, 8)]);
    assert.equal(r.code, 0, r.stderr);
    assert.ok(exists(join(cfg.logsDir, s.id, "session.jsonl")));
    assert.deepEqual(trashNames(root), []);
    assert.ok((await sessions()).includes(s.id));
    assert.equal((await runIntendant(root, ["index"])).code, 0);
    assert.ok((await found()).includes(s.id), "searchable again after a sweep");
    assert.ok((await sessions()).includes(keep.id));
    // Restoring again finds it in logs/ already: refused, nothing moves.
    const again = await runIntendant(root, ["restore", s.id]);
    assert.equal(again.code, 1);
    assert.match(again.stderr, /not in the trash/);
  }));

Deno.test("restore refuses when logs/<id> exists and touches nothing", () =>
  withTempDir(async (root) => {
    const d = await trashDeps(root);
    const s = await writeNativeSession(d.logsDir, { turns: 1 });
    await deleteNativeSession(d, s.id, s.dir);
    Deno.mkdirSync(s.dir);
    Deno.writeTextFileSync(join(s.dir, "other.txt"), "someone else's");
    await assert.rejects(restoreNativeSession(d, s.id), Deno.errors.AlreadyExists);
    assert.equal(trashNames(root).length, 1);
    assert.equal(await tombstoned(d.store, s.id), true);
    assert.equal(Deno.readTextFileSync(join(s.dir, "other.txt")), "someone else's");
  }));

Deno.test("trash GC removes an entry after 14 days and not before (injected clock)", () =>
  withTempDir(async (root) => {
    const t0 = Date.UTC(2030, 0, 1);
    const d = await trashDeps(root, () => t0);
    const s = await writeNativeSession(d.logsDir, { turns: 1 });
    const t = await deleteNativeSession(d, s.id, s.dir);
    assert.equal(t.deleted_at_ms, t0);
    const trash = join(d.stateRoot, "trash");
    Deno.mkdirSync(join(trash, ".purge-1-crashed"));
    Deno.writeTextFileSync(join(trash, "notes.txt"), "not ours");
    Deno.symlinkSync(root, join(trash, "1-linked"));
    const early = await gcTrash({ stateRoot: d.stateRoot, now: () => t0 + TRASH_KEEP_MS - 1 });
    assert.deepEqual(early, { purged: [], kept: 1 });
    assert.deepEqual(
      trashNames(root),
      ["1-linked", `${t0}-${s.id}`, "notes.txt"],
      "leftover purged",
    );
    const due = await gcTrash({ stateRoot: d.stateRoot, now: () => t0 + TRASH_KEEP_MS });
    assert.deepEqual(due, { purged: [s.id], kept: 0 });
    assert.deepEqual(trashNames(root), ["1-linked", "notes.txt"], "unknown names are left alone");
    assert.ok(exists(root), "a symlink is never followed");
  }));

Deno.test("the daemon runs the trash GC at start", () =>
  withTempDir(async (root) => {
    const d = await trashDeps(root);
    const s = await writeNativeSession(d.logsDir, { turns: 1 });
    const t = await deleteNativeSession(d, s.id, s.dir);
    const trash = join(d.stateRoot, "trash");
    Deno.renameSync(join(trash, t.entry), join(trash, `${Date.now() - 15 * DAY_MS}-${s.id}`));
    const cfg = cfgFor(root);
    const daemon = await startDaemon({ ...cfg, server: { host: "127.0.0.1", port: 0 } }, {
      noInitialSweep: true,
    });
    await daemon.shutdown();
    assert.deepEqual(trashNames(root), []);
  }));

Deno.test("`intendant index` runs the trash GC", () =>
  withTempDir(async (root) => {
    const d = await trashDeps(root);
    const old = await writeNativeSession(d.logsDir, { turns: 1 });
    const fresh = await writeNativeSession(d.logsDir, { turns: 1 });
    const t = await deleteNativeSession(d, old.id, old.dir);
    await deleteNativeSession(d, fresh.id, fresh.dir);
    const trash = join(d.stateRoot, "trash");
    const aged = `${Date.now() - 15 * DAY_MS}-${old.id}`;
    Deno.renameSync(join(trash, t.entry), join(trash, aged));
    assert.equal((await runIntendant(root, ["index"])).code, 0);
    assert.deepEqual(trashNames(root).map((n) => n.replace(/^\d+-/, "")), [fresh.id]);
  }));

Deno.test("every crash state between two steps of delete or restore recovers", () =>
  withTempDir(async (root) => {
    const d = await trashDeps(root);
    const a = await writeNativeSession(d.logsDir, { turns: 1, task: "Numbat crash drill" });
    const key = `intendant:${a.id}`;
    // Delete interrupted after its tombstone: listed, not searchable. Restore lifts it…
    await d.store.deleteSession(key);
    const repaired = await restoreNativeSession(d, a.id);
    assert.deepEqual([repaired.repaired, repaired.tombstone_lifted], [true, true]);
    assert.equal(await tombstoned(d.store, a.id), false);
    // …or delete again finishes it.
    await d.store.deleteSession(key);
    const t = await deleteNativeSession(d, a.id, a.dir);
    assert.ok(!exists(a.dir) && exists(join(d.stateRoot, "trash", t.entry)));
    // Restore interrupted after lifting the tombstone: still in the trash; again finishes it.
    assert.equal(await d.store.liftTombstone(key), true);
    const r = await restoreNativeSession(d, a.id);
    assert.deepEqual([r.repaired, r.tombstone_lifted], [false, false]);
    assert.ok(exists(join(a.dir, "session.jsonl")));
    const { indexer, store } = await createMessageIndex(cfgFor(root));
    await indexer.sweep();
    assert.ok((await store.readManifest()).sessions[key], "re-indexed");
  }));

const SHM = "/dev/shm";
/** A second volume to put logs/ on: tmpfs /dev/shm, when the temp dirs live elsewhere. */
const SHM_OTHER_VOLUME = exists(SHM) &&
  Deno.statSync(SHM).dev !== Deno.statSync(Deno.env.get("TMPDIR") ?? "/tmp").dev;

Deno.test({
  name: "a delete whose rename fails (logs on another volume) changes nothing",
  ignore: !SHM_OTHER_VOLUME,
  fn: () =>
    withTempDir(async (root) => {
      const away = Deno.makeTempDirSync({ dir: SHM, prefix: "intendant-logs-" });
      try {
        const d = await trashDeps(root);
        const s = await writeNativeSession(away, { turns: 1 });
        Deno.mkdirSync(d.stateRoot, { recursive: true });
        Deno.symlinkSync(away, d.logsDir);
        const dir = join(d.logsDir, s.id);
        await assert.rejects(deleteNativeSession(d, s.id, dir));
        assert.ok(exists(join(dir, "session.jsonl")), "never copied, never half-moved");
        assert.equal(await tombstoned(d.store, s.id), false, "the tombstone was lifted again");
        assert.deepEqual(trashNames(root), []);
      } finally {
        Deno.removeSync(away, { recursive: true });
      }
    }),
});

Deno.test("liftTombstone goes through the journal and lets the key publish again", () =>
  withTempDir(async (root) => {
    const d = await trashDeps(root);
    const s = await writeNativeSession(d.logsDir, { turns: 1 });
    const key = `intendant:${s.id}`;
    assert.equal(await d.store.liftTombstone(key), false, "nothing to lift");
    await d.store.deleteSession(key);
    const { store: other } = await createMessageIndex(cfgFor(root));
    assert.equal(await other.liftTombstone(key), true);
    // A third reader (cold: snapshot + journal) sees the lift.
    const { store: cold, indexer } = await createMessageIndex(cfgFor(root));
    assert.equal(await tombstoned(cold, s.id), false);
    await indexer.sweep();
    assert.ok((await cold.readManifest()).sessions[key]);
    await assert.rejects(cold.liftTombstone(""), TypeError);
  }));

Deno.test("API: DELETE moves to the trash, GET /api/trash lists it, POST restore brings it back", () =>
  withTempDir(async (root) => {
    const w = await buildWorld(root);
    const s = await writeNativeSession(w.cfg.logsDir, { turns: 1, task: "Echidna spine count" });
    await w.indexer.sweep();
    const same = { origin: `http://127.0.0.1:${PORT}` };
    const ops = (await (await w.get("/api/routes")).json()).routes.map(
      (r: { operation: string }) => r.operation,
    );
    for (const op of ["api_session_delete", "api_session_restore", "api_trash_list"]) {
      assert.ok(ops.includes(op), op);
    }
    const short = await w.get(`/api/session/${s.id.slice(0, 3)}`, {
      method: "DELETE",
      headers: same,
    });
    assert.equal(short.status, 400);
    assert.ok((await short.json()).message.includes(s.id));
    assert.ok(exists(s.dir));
    const cross = await w.get(`/api/session/${s.id}`, {
      method: "DELETE",
      headers: { origin: "http://evil.example" },
    });
    assert.equal(cross.status, 403);

    const del = await w.get(`/api/session/intendant:${s.id}`, { method: "DELETE", headers: same });
    assert.equal(del.status, 200);
    const body = await del.json();
    assert.equal(body.deleted, `intendant:${s.id}`);
    assert.equal(body.expires_at_ms - body.deleted_at_ms, TRASH_KEEP_MS);
    assert.equal(body.restore, `/api/session/${s.id}/restore`);
    assert.ok(!exists(s.dir) && exists(join(w.cfg.stateRoot, "trash", body.entry)));
    assert.equal((await w.get(`/api/session/${s.id}`)).status, 404);
    const trash = await (await w.get("/api/trash")).json();
    assert.deepEqual(trash.entries.map((e: { session_id: string }) => e.session_id), [s.id]);
    const search = async () =>
      (await (await w.get("/api/sessions/message-search?q=echidna")).json()).groups.length;
    assert.equal(await search(), 0);

    const res = await w.get(`/api/session/${s.id}/restore`, { method: "POST", headers: same });
    assert.equal(res.status, 200);
    assert.equal((await res.json()).restored, `intendant:${s.id}`);
    const list = await (await w.get("/api/sessions?limit=500")).json();
    assert.ok(list.sessions.some((x: { session_id: string }) => x.session_id === s.id));
    await w.indexer.sweep();
    assert.equal(await search(), 1);
    const twice = await w.get(`/api/session/${s.id}/restore`, { method: "POST", headers: same });
    assert.equal(twice.status, 409);
    const ext = list.sessions.find((x: { source: string }) => x.source === "codex");
    const extDel = await w.get(`/api/session/${encodeURIComponent(ext.key)}`, {
      method: "DELETE",
      headers: same,
    });
    assert.equal(extDel.status, 400);
  }));
