/**
 * The indexer over native sessions: the `intendant index` command and store layout,
 * incremental and no-op sweeps, scoped (watched) sweeps, deletion tombstones, hostile source
 * files, source_gone, the retention window, corrupt generations healing, and
 * reliability-plan B15 (the indexer killed mid-sweep, then exactly-once after recovery).
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { resolveConfig } from "../lib/config.ts";
import {
  createMessageIndex,
  decodeRecords,
  type Manifest,
  type Source,
} from "../lib/message_search/mod.ts";
import { runIntendant, sessionOf } from "./helpers/cli.ts";
import { writeNativeSession } from "./helpers/native_corpus.ts";
import { writeLegacySession } from "./helpers/legacy_session.ts";
import { DENO, hermeticEnv, REPO_ROOT, withTempDir } from "./helpers/temp.ts";
import { figure, STRESS } from "./helpers/figures.ts";

function cfgFor(root: string) {
  return resolveConfig(hermeticEnv(root), { cwd: root });
}

/** The manifest as any reader sees it (snapshot plus journal), through the store. */
async function readManifest(root: string): Promise<Manifest> {
  const { store } = await createMessageIndex(cfgFor(root));
  return await store.readManifest();
}

function listGens(root: string): string[] {
  try {
    return [
      ...Deno.readDirSync(join(root, "state", "cache", "message_search", "v2", "generations")),
    ].map((e) => e.name).sort();
  } catch {
    return [];
  }
}

Deno.test("`intendant index` publishes a store laid out as the spec says and prints coverage", () =>
  withTempDir(async (root) => {
    const a = sessionOf(await runIntendant(root, ["run", "first task"]));
    const b = sessionOf(await runIntendant(root, ["run", "second task"]));
    const r = await runIntendant(root, ["index"]);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /^source\s+sessions\s+records/m);
    assert.match(r.stdout, /^intendant\s+2\s+6\s+0\s+0\s/m);
    const store = join(root, "state", "cache", "message_search", "v2");
    const names = [...Deno.readDirSync(store)].map((e) => e.name).sort();
    assert.deepEqual(names, [
      "generations",
      "lexicon.pack",
      "manifest.journal",
      "manifest.json",
      "summaries.pack",
      "writer.lock",
    ]);
    const m = await readManifest(root);
    assert.equal(m.schema, 1);
    assert.ok(m.revision > 0);
    assert.deepEqual(
      Object.keys(m.sessions).sort(),
      [`intendant:${a.id}`, `intendant:${b.id}`].sort(),
    );
    for (const e of Object.values(m.sessions)) {
      assert.equal(e.records, 3);
      for (const g of e.generations) assert.match(g, /^[0-9a-f]{16}\.seg$/);
      assert.equal(Object.keys(e.cursors).length, 1);
    }
    assert.equal(listGens(root).length, 2);
    const j = await runIntendant(root, ["index", "--json"]);
    const parsed = JSON.parse(j.stdout);
    assert.equal(parsed.coverage.state, "ready");
    assert.equal(parsed.coverage.sources.intendant.sessions, 2);
    assert.equal(parsed.coverage.sources.intendant.records, 6);
    assert.equal(parsed.coverage.legacy.ask_human_answers, "none");
  }));

Deno.test("no-op sweeps write nothing; appends publish only a new segment", () =>
  withTempDir(async (root) => {
    const cfg = cfgFor(root);
    const s = await writeNativeSession(cfg.logsDir, { turns: 6 });
    const { indexer } = await createMessageIndex(cfg);
    const r1 = await indexer.sweep();
    assert.equal(r1.sources.intendant!.published, 1);
    const m1 = await readManifest(root);
    const manifestPath = join(cfg.messageSearch.storeRoot, "manifest.json");
    const mtime = Deno.statSync(manifestPath).mtime!.getTime();
    const journalPath = join(cfg.messageSearch.storeRoot, "manifest.journal");
    const journalMtime = Deno.statSync(journalPath).mtime!.getTime();
    const gens = listGens(root);
    await new Promise((r) => setTimeout(r, 20));
    const r2 = await indexer.sweep();
    assert.equal(r2.revision, m1.revision);
    assert.equal(r2.sources.intendant!.unchanged, 1);
    assert.equal(Deno.statSync(manifestPath).mtime!.getTime(), mtime);
    assert.equal(Deno.statSync(journalPath).mtime!.getTime(), journalMtime);
    assert.deepEqual(listGens(root), gens);
    // Resume appends new rows: one new segment with only those records.
    assert.equal((await runIntendant(root, ["run", "--resume", s.id, "more please"])).code, 0);
    const r3 = await indexer.sweep();
    assert.equal(r3.sources.intendant!.published, 1);
    assert.equal(r3.sources.intendant!.recordsAdded, 3);
    const e = (await readManifest(root)).sessions[`intendant:${s.id}`]!;
    assert.equal(e.generations.length, 2);
    assert.equal(e.records, s.texts.length + 3);
  }));

Deno.test("a scoped sweep reads only the units its paths touch, and still notices a deletion", () =>
  withTempDir(async (root) => {
    const cfg = cfgFor(root);
    const a = await writeNativeSession(cfg.logsDir, { turns: 2, task: "alpha task" });
    const b = await writeNativeSession(cfg.logsDir, { turns: 2, task: "beta task" });
    const { indexer, store } = await createMessageIndex(cfg);
    await indexer.sweep();
    const scoped = (paths: string[], source: Source = "intendant") =>
      indexer.sweep({ sources: new Set([source]), paths: new Set(paths) });
    // a grows; a sweep scoped to b's directory does not look at a (counted unchanged).
    assert.equal((await runIntendant(root, ["run", "--resume", a.id, "more please"])).code, 0);
    const missed = await scoped([b.dir]);
    assert.deepEqual(missed.scope, ["intendant"]);
    assert.equal(missed.sources.intendant!.published, 0);
    assert.equal(missed.sources.intendant!.unchanged, 2);
    // Scoped to a's directory (a directory event touches every file under it): published.
    const hit = await scoped([a.dir]);
    assert.equal(hit.sources.intendant!.published, 1);
    assert.equal(hit.sources.intendant!.recordsAdded, 3);
    // A session never seen before is read whatever the paths say.
    const c = await writeNativeSession(cfg.logsDir, { turns: 1, task: "gamma task" });
    assert.equal((await scoped([])).sources.intendant!.published, 1);
    // b deleted: a sweep scoped to another source keeps intendant's last counts and b's
    // state; one naming intendant lists it completely and marks b gone.
    await Deno.remove(b.dir, { recursive: true });
    const other = await scoped(["/nowhere"], "codex");
    assert.deepEqual(other.scope, ["codex"]);
    assert.equal(other.sources.intendant!.published, 1);
    assert.notEqual((await store.readManifest()).sessions[`intendant:${b.id}`]!.source_gone, true);
    const gone = await scoped([b.dir]);
    assert.equal(gone.sources.intendant!.gone, 1);
    const m = await store.readManifest();
    assert.equal(m.sessions[`intendant:${b.id}`]!.source_gone, true);
    assert.notEqual(m.sessions[`intendant:${c.id}`], undefined);
  }));

Deno.test("`intendant delete` trashes the session and tombstones its shard; a stale copy of the source never resurrects it", () =>
  withTempDir(async (root) => {
    const s = sessionOf(await runIntendant(root, ["run", "to be deleted"]));
    const keep = sessionOf(await runIntendant(root, ["run", "to be kept"]));
    assert.equal((await runIntendant(root, ["index"])).code, 0);
    const backup = join(root, "backup");
    await new Deno.Command("cp", { args: ["-a", s.dir, backup] }).output();
    const d = await runIntendant(root, ["delete", s.id.slice(0, 8), "--yes"]);
    assert.equal(d.code, 0, d.stderr);
    const m = await readManifest(root);
    assert.equal(m.sessions[`intendant:${s.id}`], undefined);
    assert.equal(typeof m.tombstones[`intendant:${s.id}`], "number");
    await assert.rejects(Deno.stat(s.dir), Deno.errors.NotFound);
    await new Deno.Command("cp", { args: ["-a", backup, s.dir] }).output();
    assert.equal((await runIntendant(root, ["index"])).code, 0);
    const after = await readManifest(root);
    assert.equal(after.sessions[`intendant:${s.id}`], undefined);
    assert.ok(after.sessions[`intendant:${keep.id}`]);
  }));

Deno.test("hostile source files are skipped without blocking; a vanished source keeps serving as source_gone", () =>
  withTempDir(async (root) => {
    const cfg = cfgFor(root);
    const good = await writeNativeSession(cfg.logsDir, { turns: 2 });
    const gone = await writeNativeSession(cfg.logsDir, { turns: 2 });
    const asDir = join(cfg.logsDir, "dir-as-spine");
    Deno.mkdirSync(join(asDir, "session.jsonl"), { recursive: true });
    const fifo = join(cfg.logsDir, "fifo-spine");
    Deno.mkdirSync(fifo);
    await new Deno.Command("mkfifo", { args: [join(fifo, "session.jsonl")] }).output();
    const canary = join(root, "canary.jsonl");
    Deno.writeTextFileSync(
      canary,
      '{"ts":"1","ts_ms":1,"event":"conversation_message","data":{"message_seq":1,"role":"user","provenance":"task","text":"CANARY"}}\n',
    );
    Deno.mkdirSync(join(cfg.logsDir, "link-spine"));
    Deno.symlinkSync(canary, join(cfg.logsDir, "link-spine", "session.jsonl"));
    const { indexer, store } = await createMessageIndex(cfg);
    const t0 = Date.now();
    const r = await indexer.sweep();
    assert.ok(Date.now() - t0 < 10_000);
    assert.equal(r.sources.intendant!.units, 2);
    assert.equal(r.sources.intendant!.skipped["discovery:not_a_regular_file"], 3);
    Deno.removeSync(gone.dir, { recursive: true });
    await indexer.sweep();
    const m = await store.readManifest();
    assert.equal(m.sessions[`intendant:${gone.id}`]!.source_gone, true);
    assert.equal(m.sessions[`intendant:${good.id}`]!.source_gone, false);
    for (const e of Object.values(m.sessions)) {
      for (const g of e.generations) {
        assert.ok(
          !Deno.readTextFileSync(join(cfg.messageSearch.storeRoot, "generations", g)).includes(
            "CANARY",
          ),
        );
      }
    }
  }));

Deno.test("sessions older than the window are not published; a corrupt generation heals in one sweep", () =>
  withTempDir(async (root) => {
    const cfg = cfgFor(root);
    writeLegacySession(cfg.logsDir, { daysAgo: 30 });
    const fresh = await writeNativeSession(cfg.logsDir, { turns: 2 });
    const { indexer, store } = await createMessageIndex(cfg);
    const r = await indexer.sweep();
    assert.equal(r.sources.intendant!.nothing, 1);
    const m = await store.readManifest();
    assert.deepEqual(Object.keys(m.sessions), [`intendant:${fresh.id}`]);
    const gen = m.sessions[`intendant:${fresh.id}`]!.generations[0]!;
    const p = join(cfg.messageSearch.storeRoot, "generations", gen);
    const bytes = Deno.readFileSync(p);
    bytes[10] = bytes[10]! ^ 0xff;
    Deno.writeFileSync(p, bytes);
    const { indexer: next, store: s2 } = await createMessageIndex(cfg);
    assert.deepEqual((await next.startup()).quarantined, [`intendant:${fresh.id}`]);
    await next.sweep();
    const healed = (await s2.readManifest()).sessions[`intendant:${fresh.id}`]!;
    assert.equal(healed.records, fresh.texts.length);
    const seg = await s2.loadSegment(healed.generations[0]!);
    assert.deepEqual(decodeRecords(seg).map((x) => x.text), fresh.texts);
  }));

Deno.test("B15: the indexer killed mid-sweep, then exactly-once after recovery", () =>
  withTempDir(async (root) => {
    const cfg = cfgFor(root);
    const sessions = [];
    for (let i = 0; i < 24; i++) {
      sessions.push(await writeNativeSession(cfg.logsDir, { turns: 3 + (i % 5) }));
    }
    const KILLS = STRESS ? 200 : 20;
    let killedMidSweep = 0;
    for (let k = 0; k < KILLS; k++) {
      // Grow a few sessions between kills so sweeps have real work.
      if (k % 4 === 0) {
        const s = sessions[k % sessions.length]!;
        const r = await runIntendant(root, ["run", "--resume", s.id, `round ${k}`]);
        assert.equal(r.code, 0, r.stderr);
      }
      const child = new Deno.Command(DENO, {
        args: ["run", "-A", "--quiet", join(REPO_ROOT, "main.ts"), "index"],
        clearEnv: true,
        env: { PATH: Deno.env.get("PATH") ?? "", ...hermeticEnv(root) },
        stdout: "null",
        stderr: "null",
      }).spawn();
      await new Promise((r) => setTimeout(r, 20 + Math.random() * 180));
      try {
        child.kill("SIGKILL");
        killedMidSweep++;
      } catch {
        // Already finished: a completed sweep is a fine kill point too.
      }
      await child.status;
    }
    const final = await runIntendant(root, ["index"]);
    assert.equal(final.code, 0, final.stderr);
    // Reference: a clean rebuild into a fresh store.
    const refRoot = join(root, "ref");
    const refCfg = {
      ...cfg,
      messageSearch: { ...cfg.messageSearch, storeRoot: join(refRoot, "v1") },
    };
    const ref = await createMessageIndex(refCfg);
    await ref.indexer.sweep();
    const { store } = await createMessageIndex(cfg);
    const got = await store.readManifest();
    const want = await ref.store.readManifest();
    let dup = 0, lost = 0;
    for (const [key, e] of Object.entries(want.sessions)) {
      const mine = got.sessions[key];
      const ids = (m: typeof e | undefined, s: typeof store) =>
        m
          ? Promise.all(m.generations.map((g) => s.loadSegment(g))).then((segs) =>
            segs.flatMap((x) => decodeRecords(x).map((r) => r.id))
          )
          : Promise.resolve([] as string[]);
      const a = await ids(mine, store);
      const b = await ids(e, ref.store);
      dup += a.length - new Set(a).size;
      lost += b.filter((id) => !a.includes(id)).length;
    }
    figure("B15", `kills: ${KILLS}, dup: ${dup}, lost: ${lost}`);
    console.log(`B15 detail: kills that hit a still-running indexer: ${killedMidSweep}/${KILLS}`);
    assert.equal(dup, 0);
    assert.equal(lost, 0);
    assert.equal(Object.keys(got.sessions).length, Object.keys(want.sessions).length);
  }));

Deno.test("a source that vanishes for a sweep and comes back unchanged is no longer source_gone", () =>
  withTempDir(async (root) => {
    const cfg = cfgFor(root);
    const s = await writeNativeSession(cfg.logsDir, { turns: 2 });
    const { indexer, store } = await createMessageIndex(cfg);
    await indexer.sweep();
    const key = `intendant:${s.id}`;
    const away = join(root, "away");
    Deno.renameSync(s.dir, away);
    await indexer.sweep();
    assert.equal((await store.readManifest()).sessions[key]!.source_gone, true);
    Deno.renameSync(away, s.dir);
    await indexer.sweep();
    const back = (await store.readManifest()).sessions[key]!;
    assert.equal(back.source_gone, false);
    assert.equal(back.records, s.texts.length);
  }));
