import assert from "node:assert/strict";
import { join } from "node:path";
import { parseTempName, removeOrphanTemps, writeFileAtomic } from "./atomic_write.ts";
import { type Fs, realFs } from "./fs.ts";
import { withTempDir } from "../../tests/helpers/temp.ts";
import { figure } from "../../tests/helpers/figures.ts";

/** Wraps realFs, throwing `err` on the named op. */
function failing(op: keyof Fs, err: Error): Fs {
  return { ...realFs, [op]: () => Promise.reject(err) } as Fs;
}

Deno.test("writeFileAtomic replaces the content, mode 0600, no temp left", () =>
  withTempDir(async (dir) => {
    const p = join(dir, "m.json");
    await writeFileAtomic(p, "one");
    await writeFileAtomic(p, "two");
    assert.equal(await Deno.readTextFile(p), "two");
    assert.equal((await Deno.stat(p)).mode! & 0o777, 0o600);
    assert.deepEqual([...Deno.readDirSync(dir)].map((e) => e.name), ["m.json"]);
  }));

Deno.test("writeFileAtomic keeps the old bytes and removes its temp when any step fails", () =>
  withTempDir(async (dir) => {
    const p = join(dir, "m.json");
    await writeFileAtomic(p, "old");
    for (const op of ["rename", "createNew"] as const) {
      await assert.rejects(
        writeFileAtomic(p, "new", { fs: failing(op, new Error(`boom ${op}`)) }),
        /boom/,
      );
      assert.equal(await Deno.readTextFile(p), "old");
      assert.deepEqual([...Deno.readDirSync(dir)].map((e) => e.name), ["m.json"]);
    }
  }));

Deno.test("a failed fsync is never followed by a rename (reliability-plan A6)", () =>
  withTempDir(async (dir) => {
    const p = join(dir, "m.json");
    await writeFileAtomic(p, "old");
    let renames = 0;
    let syncs = 0;
    const fs: Fs = {
      ...realFs,
      async createNew(path, mode) {
        const h = await realFs.createNew(path, mode);
        return {
          writeAll: (b) => h.writeAll(b),
          sync: () => {
            syncs++;
            return Promise.reject(Object.assign(new Error("EIO"), { code: "EIO" }));
          },
          close: () => h.close(),
        };
      },
      rename: (a, b) => {
        renames++;
        return realFs.rename(a, b);
      },
    };
    await assert.rejects(writeFileAtomic(p, "new", { fs }), /EIO/);
    assert.equal(renames, 0);
    assert.equal(syncs, 1);
    assert.equal(await Deno.readTextFile(p), "old");
    figure("A6", `renames after failed fsync: ${renames}, fsync retries: ${syncs - 1}`);
  }));

Deno.test("removeOrphanTemps removes dead writers' temps and spares live ones", () =>
  withTempDir(async (dir) => {
    const dead = join(dir, ".m.json.tmp-999999-1");
    const live = join(dir, `.m.json.tmp-${Deno.pid}-2`);
    const unrelated = join(dir, ".hidden");
    for (const p of [dead, live, unrelated]) await Deno.writeTextFile(p, "x");
    const removed = await removeOrphanTemps(dir, { isAlive: (pid) => pid === Deno.pid });
    assert.equal(removed, 1);
    const left = [...Deno.readDirSync(dir)].map((e) => e.name).sort();
    assert.deepEqual(left, [".hidden", `.m.json.tmp-${Deno.pid}-2`]);
    // Unknown liveness (no permission to ask) falls back to age.
    const later = Date.now() + 3_600_000;
    assert.equal(await removeOrphanTemps(dir, { isAlive: () => null, now: () => later }), 1);
  }));

Deno.test("parseTempName recognizes only our temp names", () => {
  assert.deepEqual(parseTempName(".manifest.json.tmp-42-123"), { pid: 42 });
  assert.equal(parseTempName("manifest.json"), null);
  assert.equal(parseTempName(".x.tmp-abc-1"), null);
});
