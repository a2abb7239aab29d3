import assert from "node:assert/strict";
import { join } from "node:path";
import { realFs } from "../../durable/mod.ts";
import { NotFoundError } from "../../errors.ts";
import { hash16Of } from "../locator.ts";
import { FaultFs } from "../../../tests/helpers/fault_fs.ts";
import { PV, records, withTempDir } from "../../../tests/helpers/store_fixtures.ts";
import { encodeSegment } from "./segment_encode.ts";
import { decodeRecords } from "./segment_view.ts";
import { CorruptGenerationError, loadSegment, verifySegment, writeSegment } from "./segments.ts";
import { SEGMENT_SCHEMA, type ShardSegment } from "./types.ts";

const seg: ShardSegment = {
  schema: SEGMENT_SCHEMA,
  parser_version: PV,
  key: "codex:a",
  records: records("a", 0, 3),
  marks: [{ kind: "record_ids", after_order: 3, ids: ["a-r1"] }],
};

async function loadsAsSeg(dir: string, name: string): Promise<void> {
  const v = await loadSegment(realFs, dir, name);
  assert.deepEqual(decodeRecords(v), seg.records);
  assert.deepEqual(v.marks, seg.marks);
  assert.equal(v.key, seg.key);
}

Deno.test("writeSegment() names the file by the hash of its exact bytes", () =>
  withTempDir(async (dir) => {
    const encoded = encodeSegment(seg);
    const name = await writeSegment(dir, encoded, { fs: realFs, now: Date.now });
    const bytes = await Deno.readFile(join(dir, name));
    assert.equal(name, `${hash16Of(bytes)}.seg`);
    assert.equal(name, encoded.name);
    assert.deepEqual(bytes, encoded.bytes);
    await loadsAsSeg(dir, name);
    assert.equal((await Deno.stat(join(dir, name))).mode! & 0o777, 0o600);
  }));

Deno.test("writeSegment() skips an identical young file and replaces a damaged one", () =>
  withTempDir(async (dir) => {
    const fs = new FaultFs();
    const encoded = encodeSegment(seg);
    const name = await writeSegment(dir, encoded, { fs, now: Date.now });
    fs.reset();
    assert.equal(await writeSegment(dir, encoded, { fs, now: Date.now }), name);
    // Reuse writes nothing but fsyncs the directory: the entry may have been renamed in by
    // a writer whose own directory fsync failed (reliability-plan A3).
    assert.deepEqual(fs.ops.map((o) => o.op), ["stat", "readFile", "syncDir"]);
    const path = join(dir, name);
    const bytes = await Deno.readFile(path);
    bytes[10] = bytes[10]! ^ 1;
    await Deno.writeFile(path, bytes);
    await assert.rejects(loadSegment(realFs, dir, name), CorruptGenerationError);
    await writeSegment(dir, encoded, { fs, now: Date.now });
    await loadsAsSeg(dir, name);
    // An old copy is rewritten (fresh mtime), so a lockless GC cannot delete it under us.
    fs.reset();
    await writeSegment(dir, encoded, { fs, now: () => Date.now() + 3_600_000 });
    assert.ok(fs.ops.some((o) => o.op === "rename"));
  }));

Deno.test("loadSegment() checks checksums and structure, verifySegment() the name", () =>
  withTempDir(async (dir) => {
    const name = await writeSegment(dir, encodeSegment(seg), { fs: realFs, now: Date.now });
    await assert.rejects(loadSegment(realFs, dir, "0123456789abcdef.seg"), NotFoundError);
    for (
      const bad of [
        "../../x",
        "/etc/passwd",
        "0123456789abcdef0.seg",
        "0123456789ABCDEF.seg",
        "0123456789abcdef.json",
      ]
    ) {
      await assert.rejects(loadSegment(realFs, dir, bad), TypeError);
    }
    // Valid hash over bytes that are not a segment: the name checks out, the load does not.
    const junk = new TextEncoder().encode('{"schema":1}');
    const junkName = `${hash16Of(junk)}.seg`;
    await Deno.writeFile(join(dir, junkName), junk);
    await verifySegment(realFs, dir, junkName);
    await assert.rejects(loadSegment(realFs, dir, junkName), CorruptGenerationError);
    // A valid segment under another segment's name loads (its checksums hold) but fails
    // the name check.
    const other = encodeSegment({ ...seg, key: "codex:b" });
    await Deno.writeFile(join(dir, name), other.bytes);
    assert.equal((await loadSegment(realFs, dir, name)).key, "codex:b");
    await assert.rejects(verifySegment(realFs, dir, name), CorruptGenerationError);
    await Deno.truncate(join(dir, name), 20);
    await assert.rejects(verifySegment(realFs, dir, name), CorruptGenerationError);
    await assert.rejects(loadSegment(realFs, dir, name), CorruptGenerationError);
  }));
