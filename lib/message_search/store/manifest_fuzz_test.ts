/**
 * Corrupt-manifest mutation fuzz (reliability-plan A7). A real manifest is truncated at
 * every offset, bit-flipped, NUL-filled, emptied, and hand-edited into hostile shapes.
 * Each mutant is planted and the store reopened through a spying Fs: invalid mutants must
 * be quarantined exactly once and rebuilt from empty, valid ones served; no path outside
 * the store root is ever touched; a future parser_version is never overwritten.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { FaultFs, withoutSync } from "../../../tests/helpers/fault_fs.ts";
import { figure, STRESS } from "../../../tests/helpers/figures.ts";
import {
  listQuarantine,
  prng,
  PV,
  records,
  update,
  withTempDir,
} from "../../../tests/helpers/store_fixtures.ts";
import { MANIFEST_FILE, MANIFEST_MAX_BYTES, QUARANTINE_KEEP } from "./manifest_io.ts";
import { openStore } from "./store.ts";
import { ManifestSchema } from "./types.ts";

const enc = new TextEncoder();

/** Hand-made mutants: [label, bytes]. */
function namedMutants(real: Uint8Array): [string, Uint8Array][] {
  const m = JSON.parse(new TextDecoder().decode(real));
  const key = Object.keys(m.sessions)[0]!;
  const edit = (f: (x: typeof m) => void) => {
    const c = structuredClone(m);
    f(c);
    return enc.encode(JSON.stringify(c));
  };
  const genName = (g: string) => edit((x) => (x.sessions[key].generations[0] = g));
  return [
    ["NUL fill", new Uint8Array(real.length)],
    ["empty", new Uint8Array(0)],
    ["wrong schema", edit((x) => (x.schema = 2))],
    ["sessions as array", edit((x) => (x.sessions = []))],
    ["future parser_version", edit((x) => (x.parser_version = PV + 1))],
    ["revision -1", edit((x) => (x.revision = -1))],
    ["revision 1e300", edit((x) => (x.revision = 1e300))],
    ['revision "x"', edit((x) => (x.revision = "x"))],
    ["generation ../../x", genName("../../x")],
    ["generation /etc/passwd", genName("/etc/passwd")],
    ["generation 17 hex", genName("0123456789abcdef0.seg")],
    ["generation uppercase hex", genName("0123456789ABCDEF.seg")],
    ["generation of the JSON format", genName("0123456789abcdef.json")],
    ["not UTF-8", new Uint8Array([0x7b, 0xff, 0xfe, 0x7d])],
    ["100 MB of [", new Uint8Array(100 * 1024 * 1024).fill(0x5b)],
  ];
}

function isValid(bytes: Uint8Array): boolean {
  // The store refuses oversized manifests unparsed; so does the oracle (parsing 100 MB of
  // "[" would take the test seconds).
  if (bytes.length > MANIFEST_MAX_BYTES) return false;
  try {
    const raw = JSON.parse(new TextDecoder("utf-8", { fatal: true }).decode(bytes));
    return ManifestSchema.safeParse(raw).success;
  } catch (err) {
    void err; // not UTF-8 JSON: invalid by definition
    return false;
  }
}

Deno.test("manifest mutation fuzz: quarantine invalid, serve valid, never leave the root (A7)", () =>
  withTempDir(async (root) => {
    const seedStore = await openStore({ root, parserVersion: PV, windowDays: null });
    await seedStore.publish([
      update("replace", "a", { recs: records("a", 0, 2) }),
      update("replace", "b", { recs: records("b", 0, 1) }),
    ]);
    await seedStore.deleteSession("codex:gone");
    const real = await Deno.readFile(join(root, MANIFEST_FILE));
    const rnd = prng(7);
    const mutants: [string, Uint8Array][] = namedMutants(real);
    for (let off = 0; off < real.length; off++) {
      mutants.push([`truncate@${off}`, real.slice(0, off)]);
    }
    for (let i = 0; i < (STRESS ? 1000 : 400); i++) {
      const b = real.slice();
      const at = Math.floor(rnd() * b.length);
      b[at] = b[at]! ^ (1 << Math.floor(rnd() * 8));
      mutants.push([`bitflip#${i}@${at}`, b]);
    }
    // fsync is irrelevant to parsing and containment; skipping it keeps 1,000s of mutants fast.
    const fs = new FaultFs(withoutSync());
    const store = await openStore({ root, fs, parserVersion: PV, windowDays: null });
    let crashes = 0;
    let invalid = 0;
    let quarantines = 0;
    let outside = 0;
    let futureOverwrites = 0;
    const path = join(root, MANIFEST_FILE);
    for (const [label, bytes] of mutants) {
      await Deno.writeFile(path, bytes);
      const valid = isValid(bytes);
      if (!valid) invalid++;
      fs.arm(null);
      try {
        const m = await store.readManifest();
        if (!valid) assert.deepEqual([m.sessions, m.tombstones], [{}, {}], label);
        await store.verifyAll();
        if (valid && JSON.parse(new TextDecoder().decode(bytes)).parser_version > PV) {
          await store.publish([update("replace", "z", { recs: records("z", 0, 1) })]);
          await store.gc();
          const after = await Deno.readFile(path);
          if (after.length !== bytes.length || after.some((x, i) => x !== bytes[i])) {
            futureOverwrites++;
          }
        }
      } catch (err) {
        crashes++;
        console.error(label, err);
      }
      quarantines += fs.ops.filter((o) =>
        o.op === "rename" && o.to?.includes("manifest.corrupt-")
      ).length;
      for (const o of fs.ops) {
        for (const p of [o.path, o.to]) {
          if (p !== undefined && p !== root && !p.startsWith(root + "/")) outside++;
        }
      }
    }
    const kept = listQuarantine(root).length;
    figure(
      "A7",
      `mutants: ${mutants.length}, crashes: ${crashes}, ` +
        `quarantines == invalid mutants: ${quarantines} == ${invalid}, ` +
        `out-of-dir opens: ${outside}, future-version overwrites: ${futureOverwrites}, ` +
        `quarantine files kept ≤ cap: ${kept} ≤ ${QUARANTINE_KEEP}`,
    );
    assert.equal(crashes, 0);
    assert.equal(quarantines, invalid);
    assert.equal(outside, 0);
    assert.equal(futureOverwrites, 0);
    assert.ok(kept <= QUARANTINE_KEEP);
  }));
