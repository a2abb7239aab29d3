import assert from "node:assert/strict";
import { join, relative } from "node:path";
import { InvalidInputError } from "../errors.ts";
import { buildCatalogWorld } from "../../tests/helpers/catalog_world.ts";
import { pythonZipTest, readZip } from "../../tests/helpers/catalog_zip.ts";
import { withTempDir } from "../../tests/helpers/temp.ts";
import { crc32 } from "./zip_writer.ts";
import { sessionReportZip } from "./report_zip.ts";

function regularFiles(dir: string, out: string[] = [], base = dir): string[] {
  for (const e of Deno.readDirSync(dir)) {
    const p = join(dir, e.name);
    if (e.isDirectory) regularFiles(p, out, base);
    else if (e.isFile && Deno.lstatSync(p).nlink === 1) out.push(relative(base, p));
  }
  return out.sort();
}

Deno.test("sessionReportZip() holds every regular file of a real run with the right CRCs", () =>
  withTempDir(async (root) => {
    const w = await buildCatalogWorld(root, { natives: 0 });
    const { id, dir } = w.runner!;
    Deno.mkdirSync(join(dir, "frames"), { recursive: true });
    Deno.writeFileSync(join(dir, "frames", "f1.jpg"), crypto.getRandomValues(new Uint8Array(2048)));
    const zip = await sessionReportZip(w.deps, id);
    const entries = readZip(zip);
    const names = entries.map((e) => e.name);
    const files = regularFiles(dir);
    assert.ok(files.includes("daemon.log") && files.some((f) => f.startsWith("turns/")));
    assert.deepEqual(
      names.filter((n) => n !== "README.txt").sort(),
      files.map((f) => `${id}/${f}`),
    );
    for (const e of entries) {
      if (e.name === "README.txt") continue;
      const disk = Deno.readFileSync(join(dir, e.name.slice(id.length + 1)));
      assert.equal(e.crc, crc32(disk), e.name);
      assert.deepEqual(e.data, disk, e.name);
    }
    const readme = new TextDecoder().decode(entries.find((e) => e.name === "README.txt")!.data);
    assert.match(readme, /Nothing was skipped/);
    const py = await pythonZipTest(zip);
    assert.equal(py.code, 0, py.out);
    // deno-lint-ignore no-console
    console.log(
      `report zip: ${entries.length} entries, ${zip.length} bytes, python zipfile -t: ok`,
    );
  }));

Deno.test("sessionReportZip() skips symlinks, FIFOs and hardlinks and says so in the README", () =>
  withTempDir(async (root) => {
    const w = await buildCatalogWorld(root, { runner: false, natives: 1 });
    const s = w.natives[0]!;
    const canary = join(root, "canary.txt");
    Deno.writeTextFileSync(canary, "CANARY-OUTSIDE\n");
    Deno.symlinkSync(canary, join(s.dir, "evil_link.txt"));
    Deno.symlinkSync(root, join(s.dir, "turns", "up"));
    Deno.linkSync(canary, join(s.dir, "hard.txt"));
    new Deno.Command("mkfifo", { args: [join(s.dir, "pipe")] }).outputSync();
    const zip = await sessionReportZip(w.deps, `intendant:${s.id}`);
    const entries = readZip(zip);
    for (const e of entries) {
      assert.ok(!new TextDecoder().decode(e.data).includes("CANARY-OUTSIDE"), e.name);
    }
    const readme = new TextDecoder().decode(entries.find((e) => e.name === "README.txt")!.data);
    assert.match(readme, /evil_link\.txt: symlink/);
    assert.match(readme, /turns\/up: symlink/);
    assert.match(readme, /hard\.txt: refused: hardlinked/);
    assert.match(readme, /pipe: not a regular file/);
    assert.equal((await pythonZipTest(zip)).code, 0);
    const ext = Object.keys((await w.store.readManifest()).sessions).find((k) =>
      k.startsWith("pi:")
    )!;
    await assert.rejects(() => sessionReportZip(w.deps, ext), InvalidInputError);
  }));

Deno.test("sessionReportZip() stops adding content at the cap and lists what it left out", () =>
  withTempDir(async (root) => {
    const w = await buildCatalogWorld(root, { runner: false, natives: 1 });
    const s = w.natives[0]!;
    Deno.writeFileSync(
      join(s.dir, "turns", "turn_099_stdout.txt"),
      new Uint8Array(200_000).fill(0x41),
    );
    const zip = await sessionReportZip(w.deps, s.id, { maxTotalBytes: 100_000 });
    const entries = readZip(zip);
    assert.ok(!entries.some((e) => e.name.endsWith("turn_099_stdout.txt")));
    const readme = new TextDecoder().decode(entries.find((e) => e.name === "README.txt")!.data);
    assert.match(
      readme,
      /turns\/turn_099_stdout\.txt: over the 100000-byte content cap \(200000 bytes\)/,
    );
    assert.ok(entries.some((e) => e.name.endsWith("session.jsonl")), "smaller files still fit");
    await assert.rejects(() => sessionReportZip(w.deps, s.id, { maxTotalBytes: -1 }), RangeError);
  }));
