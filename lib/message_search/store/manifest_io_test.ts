import assert from "node:assert/strict";
import { join } from "node:path";
import { realFs } from "../../durable/mod.ts";
import { FaultFs } from "../../../tests/helpers/fault_fs.ts";
import { listQuarantine, PV, withTempDir } from "../../../tests/helpers/store_fixtures.ts";
import {
  emptyManifest,
  MANIFEST_FILE,
  QUARANTINE_KEEP,
  quarantineManifest,
  readManifestFile,
  writeManifest,
} from "./manifest_io.ts";

Deno.test("readManifestFile() tells missing, valid and corrupt apart", () =>
  withTempDir(async (root) => {
    assert.equal((await readManifestFile(realFs, root)).kind, "missing");
    await writeManifest(realFs, root, emptyManifest(PV, 7, 7));
    const ok = await readManifestFile(realFs, root);
    assert.equal(ok.kind === "ok" && ok.manifest.revision, 7);
    for (const bad of ["", "{", '{"schema":2}', "\u0000\u0000", "[[[["]) {
      await Deno.writeTextFile(join(root, MANIFEST_FILE), bad);
      const r = await readManifestFile(realFs, root);
      assert.equal(r.kind, "corrupt", JSON.stringify(bad));
      assert.equal(r.kind === "corrupt" && r.error.name, "ManifestCorruptError");
    }
  }));

Deno.test("an I/O error while reading the manifest propagates and is never called corrupt", () =>
  withTempDir(async (root) => {
    await writeManifest(realFs, root, emptyManifest(PV, 7, 7));
    const fs = new FaultFs();
    fs.arm({ match: (op) => op.op === "readFile", action: "EIO" });
    await assert.rejects(readManifestFile(fs, root), { code: "EIO" });
    assert.deepEqual(listQuarantine(root), []);
  }));

Deno.test(`quarantine keeps at most ${QUARANTINE_KEEP} files, deleting the oldest`, () =>
  withTempDir(async (root) => {
    // A frozen clock: same-millisecond quarantines must not overwrite each other.
    const now = () => 1_000;
    for (let i = 0; i < 8; i++) {
      await Deno.writeTextFile(join(root, MANIFEST_FILE), `garbage ${i}`);
      assert.equal(
        await quarantineManifest(root, { fs: realFs, now }),
        `manifest.corrupt-${1_000 + i}`,
      );
    }
    const kept = listQuarantine(root).sort();
    assert.equal(kept.length, QUARANTINE_KEEP);
    assert.deepEqual(kept, [3, 4, 5, 6, 7].map((i) => `manifest.corrupt-${1_000 + i}`));
    assert.equal(await Deno.readTextFile(join(root, "manifest.corrupt-1007")), "garbage 7");
    // Nothing to quarantine: null, no throw.
    assert.equal(await quarantineManifest(root, { fs: realFs, now }), null);
  }));
