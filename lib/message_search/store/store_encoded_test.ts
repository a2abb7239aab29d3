/**
 * ShardUpdate.encoded (issue 16 §4): a segment encoded where it was extracted is written
 * by the publisher exactly as encoded, after checking that its name is the hash of its
 * bytes and its header names the update's key and the store's parser version; a merge
 * decodes it like any base.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { PV, records, update, withTempDir } from "../../../tests/helpers/store_fixtures.ts";
import type { MessageRecord } from "../record.ts";
import { COMPACT_MAX_SEGMENTS } from "./_apply_update.ts";
import { encodeSegment, segmentName } from "./segment_encode.ts";
import { decodeRecords } from "./segment_view.ts";
import { openStore } from "./store.ts";
import { type EncodedSegment, SEGMENT_SCHEMA, type ShardUpdate } from "./types.ts";

function encoded(id: string, recs: MessageRecord[], o: { pv?: number } = {}): EncodedSegment {
  return encodeSegment({
    schema: SEGMENT_SCHEMA,
    parser_version: o.pv ?? PV,
    key: `codex:${id}`,
    records: recs,
    marks: [],
  });
}

/** An update for `codex:<id>` that carries only the encoded segment. */
function carrying(kind: "replace" | "append", id: string, e: EncodedSegment, base?: string[]) {
  const u: ShardUpdate = { ...update(kind, id, { base }), encoded: e };
  delete u.segment;
  return u;
}

Deno.test("a pre-encoded segment is written as is; records alongside it are not re-encoded", () =>
  withTempDir(async (root) => {
    const store = await openStore({ root, parserVersion: PV, windowDays: null });
    const e = encoded("a", records("a", 0, 3));
    // The update's records disagree with its bytes: the bytes are authoritative.
    const u: ShardUpdate = { ...update("replace", "a", { recs: records("a", 0, 1) }), encoded: e };
    assert.deepEqual((await store.publish([u])).accepted, ["codex:a"]);
    const entry = (await store.readManifest()).sessions["codex:a"]!;
    assert.deepEqual(entry.generations, [e.name]);
    assert.equal(entry.records, 3);
    assert.deepEqual(await Deno.readFile(join(root, "generations", e.name)), e.bytes);
    // Bytes alone are enough.
    const b = encoded("b", records("b", 0, 2));
    assert.deepEqual((await store.publish([carrying("replace", "b", b)])).accepted, ["codex:b"]);
    assert.deepEqual((await store.readManifest()).sessions["codex:b"]!.generations, [b.name]);
  }));

Deno.test("a pre-encoded segment whose name or header does not fit is invalid and never written", () =>
  withTempDir(async (root) => {
    const store = await openStore({ root, parserVersion: PV, windowDays: null });
    const good = encoded("c", records("c", 0, 2));
    const cut = good.bytes.slice(0, 300);
    const bad: [string, EncodedSegment][] = [
      ["name not the bytes' hash", { bytes: good.bytes, name: "0123456789abcdef.seg" }],
      ["another session's key", encoded("zz", records("c", 0, 2))],
      ["another parser version", encoded("c", records("c", 0, 2), { pv: PV + 1 })],
      ["bytes that do not decode", { bytes: cut, name: segmentName(cut) }],
    ];
    for (const [why, e] of bad) {
      const r = await store.publish([carrying("replace", "c", e)]);
      assert.deepEqual(r.rejected, [{ key: "codex:c", reason: "invalid" }], why);
    }
    assert.deepEqual([...Deno.readDirSync(join(root, "generations"))], []);
  }));

Deno.test("appends carrying encoded segments merge past 16 segments, records in order", () =>
  withTempDir(async (root) => {
    const store = await openStore({ root, parserVersion: PV, windowDays: null });
    await store.publish([carrying("replace", "a", encoded("a", records("a", 0, 1)))]);
    for (let i = 1; i <= COMPACT_MAX_SEGMENTS; i++) {
      const base = (await store.readManifest()).sessions["codex:a"]!.generations;
      const u = carrying("append", "a", encoded("a", records("a", i, 1)), base);
      assert.deepEqual((await store.publish([u])).accepted, ["codex:a"]);
    }
    const e = (await store.readManifest()).sessions["codex:a"]!;
    assert.equal(e.generations.length, 1);
    assert.equal(e.records, COMPACT_MAX_SEGMENTS + 1);
    const got = decodeRecords(await store.loadSegment(e.generations[0]!));
    assert.deepEqual(got, records("a", 0, COMPACT_MAX_SEGMENTS + 1));
  }));
