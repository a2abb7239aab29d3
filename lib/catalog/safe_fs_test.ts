import assert from "node:assert/strict";
import { join } from "node:path";
import { withTempDir } from "../../tests/helpers/temp.ts";
import { listInside, openInside, readInside } from "./safe_fs.ts";

Deno.test("openInside() opens only plain regular files reached through real directories", () =>
  withTempDir(async (root) => {
    const dir = join(root, "sess");
    Deno.mkdirSync(join(dir, "turns"), { recursive: true });
    Deno.mkdirSync(join(root, "outside"));
    const canary = join(root, "outside", "canary.txt");
    Deno.writeTextFileSync(canary, "CANARY");
    Deno.writeTextFileSync(join(dir, "turns", "ok.txt"), "hello world");
    Deno.symlinkSync(canary, join(dir, "turns", "link.txt"));
    Deno.symlinkSync(join(dir, "turns", "link.txt"), join(dir, "turns", "chain.txt"));
    Deno.symlinkSync("/dev/zero", join(dir, "zero"));
    Deno.symlinkSync("/proc/self/environ", join(dir, "environ"));
    Deno.linkSync(canary, join(dir, "hard.txt"));
    Deno.mkdirSync(join(dir, "adir"));
    Deno.symlinkSync(join(root, "outside"), join(dir, "outlink"));
    new Deno.Command("mkfifo", { args: [join(dir, "fifo")] }).outputSync();

    const r = await readInside(dir, "turns/ok.txt", { maxBytes: 5, offset: 6 });
    assert.ok(r.ok);
    assert.equal(new TextDecoder().decode(r.bytes), "world");
    const cases: [string, string][] = [
      ["turns/link.txt", "symlink"],
      ["turns/chain.txt", "symlink"],
      ["zero", "symlink"],
      ["environ", "symlink"],
      ["hard.txt", "hardlinked"],
      ["adir", "not_regular"],
      ["fifo", "not_regular"],
      ["outlink/canary.txt", "parent"],
      ["missing.txt", "missing"],
      ["../outside/canary.txt", "bad_name"],
      ["turns/../hard.txt", "bad_name"],
      ["/etc/passwd", "bad_name"],
      ["turns//ok.txt", "bad_name"],
      ["turns\\ok.txt", "bad_name"],
      ["ok.txt\0", "bad_name"],
    ];
    for (const [rel, reason] of cases) {
      const o = await openInside(dir, rel);
      assert.deepEqual(o, { ok: false, reason }, rel);
    }
    // The session dir itself behind a symlink is refused too.
    Deno.symlinkSync(dir, join(root, "sesslink"));
    assert.deepEqual(await openInside(join(root, "sesslink"), "turns/ok.txt"), {
      ok: false,
      reason: "parent",
    });
    assert.equal(await listInside(join(root, "sesslink"), ""), null);
    const listed = (await listInside(dir, ""))!.map((e) => `${e.name}:${e.kind}`);
    assert.ok(
      listed.includes("outlink:symlink") && listed.includes("fifo:other") &&
        listed.includes("turns:dir"),
    );
  }));
