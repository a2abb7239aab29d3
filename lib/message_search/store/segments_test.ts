import assert from "node:assert/strict";
import { join } from "node:path";
import { realFs } from "../../durable/mod.ts";
import { NotFoundError } from "../../errors.ts";
import { hash16Of } from "../locator.ts";
import { FaultFs } from "../../../tests/helpers/fault_fs.ts";
import { PV, records, withTempDir } from "../../../tests/helpers/store_fixtures.ts";
import {
  CorruptGenerationError,
  encodeSegment,
  loadSegment,
  verifySegment,
  writeSegment,
} from "./segments.ts";
import type { ShardSegment } from "./types.ts";

const seg: ShardSegment = {
  schema: 1,
  parser_version: PV,
  key: "codex:a",
  records: records("a", 0, 3),
  marks: [{ kind: "record_ids", after_order: 3, ids: ["a-r1"] }],
};

Deno.test("writeSegment() names the file by the hash of its exact bytes", () =>
  withTempDir(async (dir) => {
    const name = await writeSegment(dir, seg, { fs: realFs, now: Date.now });
    const bytes = await Deno.readFile(join(dir, name));
    assert.equal(name, `${hash16Of(bytes)}.json`);
    assert.deepEqual(bytes, encodeSegment(seg));
    assert.deepEqual(await loadSegment(realFs, dir, name), seg);
    assert.equal((await Deno.stat(join(dir, name))).mode! & 0o777, 0o600);
  }));

Deno.test("writeSegment() skips an identical young file and replaces a damaged one", () =>
  withTempDir(async (dir) => {
    const fs = new FaultFs();
    const name = await writeSegment(dir, seg, { fs, now: Date.now });
    fs.reset();
    assert.equal(await writeSegment(dir, seg, { fs, now: Date.now }), name);
    // Reuse writes nothing but fsyncs the directory: the entry may have been renamed in by
    // a writer whose own directory fsync failed (reliability-plan A3).
    assert.deepEqual(fs.ops.map((o) => o.op), ["stat", "readFile", "syncDir"]);
    const path = join(dir, name);
    const bytes = await Deno.readFile(path);
    bytes[10] = bytes[10]! ^ 1;
    await Deno.writeFile(path, bytes);
    await assert.rejects(loadSegment(realFs, dir, name), CorruptGenerationError);
    await writeSegment(dir, seg, { fs, now: Date.now });
    assert.deepEqual(await loadSegment(realFs, dir, name), seg);
    // An old copy is rewritten (fresh mtime), so a lockless GC cannot delete it under us.
    fs.reset();
    await writeSegment(dir, seg, { fs, now: () => Date.now() + 3_600_000 });
    assert.ok(fs.ops.some((o) => o.op === "rename"));
  }));

Deno.test("loadSegment() verifies hash, parse and name before trusting a file", () =>
  withTempDir(async (dir) => {
    const name = await writeSegment(dir, seg, { fs: realFs, now: Date.now });
    await assert.rejects(loadSegment(realFs, dir, "0123456789abcdef.json"), NotFoundError);
    for (
      const bad of ["../../x", "/etc/passwd", "0123456789abcdef0.json", "0123456789ABCDEF.json"]
    ) {
      await assert.rejects(loadSegment(realFs, dir, bad), TypeError);
    }
    // Valid hash over bytes that are not a segment.
    const junk = new TextEncoder().encode('{"schema":1}');
    const junkName = `${hash16Of(junk)}.json`;
    await Deno.writeFile(join(dir, junkName), junk);
    await verifySegment(realFs, dir, junkName);
    await assert.rejects(loadSegment(realFs, dir, junkName), CorruptGenerationError);
    await Deno.truncate(join(dir, name), 20);
    await assert.rejects(verifySegment(realFs, dir, name), CorruptGenerationError);
  }));
