import assert from "node:assert/strict";
import { join } from "node:path";
import {
  createNewFileSync,
  ensurePrivateDirSync,
  isInside,
  openRegularFileSync,
} from "./safe_create.ts";
import { ContainmentError } from "../errors.ts";
import { withTempDir } from "../../tests/helpers/temp.ts";

Deno.test("createNewFileSync refuses a planted symlink (dangling or to a canary) and leaves the target untouched", () =>
  withTempDir((dir) => {
    const canary = join(dir, "canary.txt");
    Deno.writeTextFileSync(canary, "secret");
    Deno.symlinkSync(canary, join(dir, "a.log"));
    Deno.symlinkSync(join(dir, "nowhere"), join(dir, "b.log"));
    assert.throws(() => createNewFileSync(dir, "a.log", { root: dir }), Deno.errors.AlreadyExists);
    assert.throws(() => createNewFileSync(dir, "b.log", { root: dir }), Deno.errors.AlreadyExists);
    assert.equal(Deno.readTextFileSync(canary), "secret");
    assert.throws(() => Deno.statSync(join(dir, "nowhere")), Deno.errors.NotFound);
  }));

Deno.test("openRegularFileSync never writes through a symlink, even when appending", () =>
  withTempDir((dir) => {
    const canary = join(dir, "canary.txt");
    Deno.writeTextFileSync(canary, "secret");
    Deno.symlinkSync(canary, join(dir, "x.jsonl"));
    assert.throws(
      () => openRegularFileSync(dir, "x.jsonl", { root: dir, append: true }),
      ContainmentError,
    );
    assert.equal(Deno.readTextFileSync(canary), "secret");
  }));

Deno.test("files are refused in a symlinked parent that leaves the root", () =>
  withTempDir((dir) => {
    const root = join(dir, "session");
    const elsewhere = join(dir, "elsewhere");
    Deno.mkdirSync(root);
    Deno.mkdirSync(elsewhere);
    Deno.symlinkSync(elsewhere, join(root, "turns"));
    assert.throws(
      () => createNewFileSync(join(root, "turns"), "t.txt", { root }),
      ContainmentError,
    );
    assert.deepEqual([...Deno.readDirSync(elsewhere)], []);
  }));

Deno.test("names that are not one plain component are refused", () =>
  withTempDir((dir) => {
    for (const bad of ["../x", "/etc/passwd", "a/b", "..", ".", "", "a\0b", "x".repeat(300)]) {
      assert.throws(
        () => createNewFileSync(dir, bad, { root: dir }),
        ContainmentError,
        JSON.stringify(bad),
      );
    }
  }));

Deno.test("ensurePrivateDirSync makes 0700 dirs, tightens loose ones and refuses symlinks", () =>
  withTempDir((dir) => {
    const p = join(dir, "a", "b");
    ensurePrivateDirSync(p);
    assert.equal(Deno.statSync(p).mode! & 0o777, 0o700);
    Deno.chmodSync(p, 0o755);
    ensurePrivateDirSync(p);
    assert.equal(Deno.statSync(p).mode! & 0o777, 0o700);
    Deno.symlinkSync(dir, join(dir, "link"));
    assert.throws(() => ensurePrivateDirSync(join(dir, "link")), ContainmentError);
    assert.equal(isInside("/a/b/c", "/a/b"), true);
    assert.equal(isInside("/a/bc", "/a/b"), false);
    assert.equal(isInside("/a", "/a/b"), false);
  }));
