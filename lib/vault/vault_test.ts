/**
 * The vault on real files: first sight, appends stored as tails, rewrites as versions,
 * touches, dedup across sessions, re-packing, gone files, restore (byte-identical, 0600,
 * the kept mtime, never overwriting, only under the source's homes without --to), a
 * damaged catalog set aside and a damaged object refused.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { withTempDir } from "../../tests/helpers/store_fixtures.ts";
import { catalogPath, REPACK_AFTER_CHUNKS } from "./layout.ts";
import {
  DamagedObjectError,
  type KeepUnit,
  latest,
  restoreSession,
  Vault,
  vaultStatus,
} from "./mod.ts";

const enc = new TextEncoder();

/** A Claude-Code-shaped transcript line (the vault keeps bytes; the shape keeps it honest). */
function line(i: number, text = `message ${i}`): string {
  return JSON.stringify({
    type: i % 2 ? "assistant" : "user",
    uuid: `00000000-0000-4000-8000-${String(i).padStart(12, "0")}`,
    sessionId: "7c1f0a52-3c1e-4f55-9b7e-2a4d5e6f7a8b",
    timestamp: new Date(1_764_000_000_000 + i * 1000).toISOString(),
    message: { role: i % 2 ? "assistant" : "user", content: [{ type: "text", text }] },
  }) + "\n";
}

function lines(from: number, n: number): string {
  let s = "";
  for (let i = from; i < from + n; i++) s += line(i);
  return s;
}

async function setup(dir: string) {
  const home = join(dir, "home", ".claude");
  const proj = join(home, "projects", "-home-dev-shop");
  await Deno.mkdir(join(proj, "7c1f0a52", "subagents"), { recursive: true });
  const main = join(proj, "7c1f0a52-3c1e-4f55-9b7e-2a4d5e6f7a8b.jsonl");
  const sub = join(proj, "7c1f0a52", "subagents", "agent-1.jsonl");
  const unit: KeepUnit = {
    key: "claude-code:7c1f0a52-3c1e-4f55-9b7e-2a4d5e6f7a8b",
    source: "claude-code",
    sessionId: "7c1f0a52-3c1e-4f55-9b7e-2a4d5e6f7a8b",
    files: [{ path: main, role: "main" }, { path: sub, role: "subagent" }],
  };
  let t = 1_000_000;
  const vault = new Vault({ dir: join(dir, "state", "vault"), now: () => (t += 1000) });
  return { home, proj, main, sub, unit, vault };
}

async function restoredBytes(vault: Vault, key: string, to: string, homes: string[] = []) {
  const c = await vault.find(key);
  const out = await restoreSession({ vault, catalog: c, to, homes });
  return out;
}

Deno.test("vault: first sight, append as a tail, rewrite as a new version, touch", async () => {
  await withTempDir(async (dir) => {
    const { main, sub, unit, vault } = await setup(dir);
    const v1 = lines(0, 200);
    await Deno.writeTextFile(main, v1);
    await Deno.writeTextFile(sub, lines(1000, 5));
    let r = await vault.keep([unit]);
    assert.deepEqual([r.new, r.appended, r.rewritten, r.errors], [2, 0, 0, []]);
    const first = r.bytesWritten;
    assert.ok(first > 0 && first < v1.length, `compressed: ${first} < ${v1.length}`);

    // Nothing changed: nothing read, nothing written.
    r = await vault.keep([unit]);
    assert.deepEqual([r.same, r.bytesWritten], [2, 0]);

    // An append stores only its tail: the version grows by one chunk.
    const tail = lines(200, 3);
    await Deno.writeTextFile(main, tail, { append: true });
    r = await vault.keep([unit]);
    assert.equal(r.appended, 1);
    assert.ok(r.bytesWritten < first / 4, `tail only: ${r.bytesWritten} bytes`);
    let c = (await vault.read(unit.key))!;
    assert.equal(c.files[0]!.versions.length, 1);
    assert.equal(latest(c.files[0]!).chunks.length, 2);
    assert.equal(latest(c.files[0]!).size, v1.length + tail.length);

    // A touch (same bytes, new mtime) is no new version.
    await Deno.utime(main, new Date(), new Date(Date.now() + 5000));
    r = await vault.keep([unit]);
    assert.equal(r.rewritten, 0);
    c = (await vault.read(unit.key))!;
    assert.equal(c.files[0]!.versions.length, 1);

    // A rewrite of the same size (one byte changed in the middle) is a new version.
    const before = await Deno.readFile(main);
    const edited = before.slice();
    edited[Math.floor(edited.length / 2)] = edited[Math.floor(edited.length / 2)] === 65 ? 66 : 65;
    await Deno.writeFile(main, edited);
    r = await vault.keep([unit]);
    assert.equal(r.rewritten, 1);
    // A shorter rewrite (a compaction) is another; every old version stays readable.
    await Deno.writeTextFile(main, lines(0, 10));
    r = await vault.keep([unit]);
    assert.equal(r.rewritten, 1);
    c = (await vault.read(unit.key))!;
    const versions = c.files[0]!.versions;
    assert.equal(versions.length, 3);
    const read = async (i: number) => {
      const parts: Uint8Array[] = [];
      for await (const p of vault.bytesOf(versions[i]!)) parts.push(p);
      return new Uint8Array(await new Blob(parts as BlobPart[]).arrayBuffer());
    };
    assert.deepEqual(await read(0), before);
    assert.deepEqual(await read(1), edited);
    assert.deepEqual(await read(2), enc.encode(lines(0, 10)));
  });
});

Deno.test("vault: a deleted session is restored byte for byte, 0600, with its mtime, never over a file", async () => {
  await withTempDir(async (dir) => {
    const { home, main, sub, unit, vault } = await setup(dir);
    await Deno.writeTextFile(main, lines(0, 50));
    await Deno.writeTextFile(sub, lines(500, 4));
    const mtime = new Date(1_760_000_000_000);
    await Deno.utime(main, mtime, mtime);
    await vault.keep([unit]);
    const want = await Deno.readFile(main);
    const wantSub = await Deno.readFile(sub);

    // While the file is there, a restore to its place refuses and writes nothing.
    const c0 = await vault.find("7c1f0a52");
    await assert.rejects(
      restoreSession({ vault, catalog: c0, homes: [home] }),
      /Refusing to overwrite/,
    );

    // The agent's cleanup deletes it (the folder too): the vault marks it gone.
    await Deno.remove(join(home, "projects"), { recursive: true });
    const r = await vault.keep([unit]);
    assert.equal(r.gone, 2);
    const st = vaultStatus((await vault.list()).catalogs);
    assert.equal(st.total.gone, 1);
    assert.equal(st.by_source["claude-code"]!.sessions, 1);

    // Outside the source's homes, only with --to.
    await assert.rejects(
      restoreSession({ vault, catalog: await vault.find(unit.sessionId), homes: ["/elsewhere"] }),
      /not under the claude-code home/,
    );
    const out = await restoreSession({
      vault,
      catalog: await vault.find(unit.sessionId),
      homes: [home],
    });
    assert.deepEqual(out.map((f) => f.path), [main, sub]);
    assert.deepEqual(await Deno.readFile(main), want);
    assert.deepEqual(await Deno.readFile(sub), wantSub);
    const info = await Deno.stat(main);
    assert.equal(info.mode! & 0o777, 0o600);
    assert.equal(info.mtime!.getTime(), mtime.getTime());
    assert.equal(info.nlink, 1, "the temp link is gone");
    // A second restore refuses: the file is back in place.
    await assert.rejects(
      restoreSession({ vault, catalog: await vault.find(unit.sessionId), homes: [home] }),
      /Refusing to overwrite/,
    );
    // The next keep sees it back in place (not gone) and stores nothing new.
    const again = await vault.keep([unit]);
    assert.deepEqual([again.same, again.bytesWritten], [2, 0]);
    assert.equal(vaultStatus((await vault.list()).catalogs).total.gone, 0);

    // --to keeps the layout relative to the main file's folder.
    const to = join(dir, "out");
    const copies = await restoredBytes(vault, unit.key, to);
    assert.deepEqual(copies.map((f) => f.path), [
      join(to, "7c1f0a52-3c1e-4f55-9b7e-2a4d5e6f7a8b.jsonl"),
      join(to, "7c1f0a52", "subagents", "agent-1.jsonl"),
    ]);
    assert.deepEqual(await Deno.readFile(copies[0]!.path), want);
  });
});

Deno.test("vault: the vault is private; equal content is stored once; long append runs re-pack", async () => {
  await withTempDir(async (dir) => {
    const { main, unit, vault } = await setup(dir);
    await Deno.writeTextFile(main, lines(0, 20));
    const twin = join(dir, "home", ".claude", "projects", "-home-dev-shop", "twin.jsonl");
    await Deno.copyFile(main, twin);
    const twinUnit: KeepUnit = {
      key: "claude-code:twin",
      source: "claude-code",
      sessionId: "twin",
      files: [{ path: twin, role: "main" }],
    };
    await vault.keep([{ ...unit, files: [unit.files[0]!] }, twinUnit]);
    assert.equal((await Deno.stat(vault.dir)).mode! & 0o777, 0o700);
    assert.equal((await Deno.stat(catalogPath(vault.dir, unit.key))).mode! & 0o777, 0o600);
    const st = vaultStatus((await vault.list()).catalogs);
    const one = (await vault.read(unit.key))!.files[0]!.versions[0]!.chunks[0]!.z;
    assert.equal(st.total.bytes_kept, one, "one object for two equal files");
    assert.equal(st.total.bytes_original, 2 * lines(0, 20).length);

    // Appends one line at a time: past REPACK_AFTER_CHUNKS the chunks are merged.
    for (let i = 0; i < REPACK_AFTER_CHUNKS + 3; i++) {
      await Deno.writeTextFile(main, line(100 + i), { append: true });
      await vault.keep([{ ...unit, files: [unit.files[0]!] }]);
    }
    const v = latest((await vault.read(unit.key))!.files[0]!);
    assert.ok(v.chunks.length <= REPACK_AFTER_CHUNKS, `${v.chunks.length} chunks`);
    assert.ok(v.appends >= REPACK_AFTER_CHUNKS, `${v.appends} appends`);
    const copies = await restoredBytes(vault, unit.key, join(dir, "out"));
    assert.deepEqual(await Deno.readFile(copies[0]!.path), await Deno.readFile(main));
    // The merged-away chunks are orphans; collect removes them and keeps the rest.
    const freed = await vault.collect(0);
    assert.ok(freed.objects > 0);
    const again = await restoredBytes(vault, unit.key, join(dir, "out2"));
    assert.deepEqual(await Deno.readFile(again[0]!.path), await Deno.readFile(main));
    assert.deepEqual(
      await Deno.readFile(
        (await restoredBytes(vault, "claude-code:twin", join(dir, "o3")))[0]!
          .path,
      ),
      await Deno.readFile(twin),
    );
  });
});

Deno.test("vault: a damaged catalog is set aside, never overwritten; a damaged object is refused", async () => {
  await withTempDir(async (dir) => {
    const { main, unit, vault } = await setup(dir);
    await Deno.writeTextFile(main, lines(0, 30));
    await vault.keep([unit]);
    const path = catalogPath(vault.dir, unit.key);
    const good = await Deno.readTextFile(path);
    await Deno.writeTextFile(path, good.replace('"size":', '"size":-'));
    const listed = await vault.list();
    assert.equal(listed.damaged.length, 1);
    const r = await vault.keep([unit]);
    assert.match(r.errors.join("\n"), /set aside/);
    const aside = [...Deno.readDirSync(join(vault.dir, "sessions"))].filter((e) =>
      e.name.includes(".damaged-")
    );
    assert.equal(aside.length, 1, "the damaged catalog is kept beside the new one");
    assert.equal(r.new, 1, "its session starts a new catalog");

    // Flip a byte of an object: restore refuses rather than write wrong bytes.
    const c = (await vault.read(unit.key))!;
    const chunk = c.files[0]!.versions[0]!.chunks[0]!;
    const obj = join(vault.dir, "objects", chunk.o.slice(0, 2), `${chunk.o}.${chunk.c}`);
    const bytes = await Deno.readFile(obj);
    bytes[Math.floor(bytes.length / 2)]! ^= 0xff;
    await Deno.writeFile(obj, bytes);
    await assert.rejects(restoredBytes(vault, unit.key, join(dir, "out")), DamagedObjectError);
  });
});
