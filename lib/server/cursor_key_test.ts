import assert from "node:assert/strict";
import { join } from "node:path";
import { withTempDir } from "../../tests/helpers/temp.ts";
import { CURSOR_KEY_BYTES, CURSOR_KEY_FILE, loadCursorKey } from "./cursor_key.ts";

Deno.test("loadCursorKey() keeps a good key and replaces a planted one unread, in one line", () =>
  withTempDir(async (dir) => {
    const path = join(dir, CURSOR_KEY_FILE);
    const lines: string[] = [];
    const logger = (l: string) => lines.push(l);
    const first = await loadCursorKey(dir, { logger });
    assert.equal(first.length, CURSOR_KEY_BYTES);
    assert.deepEqual(await loadCursorKey(dir, { logger }), first, "a good key is kept");
    assert.deepEqual(lines, [], "creating the first key is not news");
    const outside = join(dir, "outside");
    Deno.writeTextFileSync(outside, "x".repeat(CURSOR_KEY_BYTES));
    const plants: [string, () => void, RegExp][] = [
      ["/dev/zero", () => Deno.symlinkSync("/dev/zero", path), /a symbolic link/],
      ["outside", () => Deno.symlinkSync(outside, path), /a symbolic link/],
      ["hard link", () => Deno.linkSync(outside, path), /a hard link/],
      ["fifo", () => new Deno.Command("mkfifo", { args: [path] }).outputSync(), /not a regular/],
      ["short", () => Deno.writeFileSync(path, new Uint8Array(5)), /5 bytes, not 32/],
      [
        "huge",
        () => Deno.truncateSync((Deno.writeFileSync(path, new Uint8Array()), path), 1 << 30),
        /larger than a key/,
      ],
    ];
    for (const [name, plant, said] of plants) {
      Deno.removeSync(path);
      plant();
      lines.length = 0;
      const key = await loadCursorKey(dir, { logger });
      assert.equal(key.length, CURSOR_KEY_BYTES, name);
      assert.equal(lines.length, 1, name);
      assert.match(lines[0]!, said, name);
      assert.doesNotMatch(lines[0]!, /\n/);
      const st = Deno.lstatSync(path);
      assert.ok(st.isFile && st.size === CURSOR_KEY_BYTES && st.nlink === 1, `${name} replaced`);
      assert.deepEqual(Deno.readFileSync(path), key);
    }
    assert.equal(Deno.readTextFileSync(outside), "x".repeat(CURSOR_KEY_BYTES), "target untouched");
    // A directory at the name cannot be replaced: a key in memory, the process goes on.
    Deno.removeSync(path);
    Deno.mkdirSync(join(path, "sub"), { recursive: true });
    lines.length = 0;
    assert.equal((await loadCursorKey(dir, { logger })).length, CURSOR_KEY_BYTES);
    assert.match(lines.join("\n"), /cannot replace .* kept in memory/);
  }));
