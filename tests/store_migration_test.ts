/**
 * Migration to binary segments (issue 16 §5), through the real program: a store the
 * previous version wrote (`cache/message_search/v1`: JSON generations named `.json`, an
 * older parser version) is never read and never touched — the first `intendant index`
 * builds `v2` from the sources — and an older parser meeting the new store is refused
 * without a byte of the new manifest changing (a binary that knows only v1 never opens v2
 * at all: it would take `.seg` names for a corrupt manifest).
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { resolveConfig } from "../lib/config.ts";
import {
  createMessageIndex,
  MANIFEST_FILE,
  openStore,
  PARSER_VERSION,
  SEGMENT_SCHEMA,
} from "../lib/message_search/mod.ts";
import { runIntendant, sessionOf } from "./helpers/cli.ts";
import { hermeticEnv, withTempDir } from "./helpers/temp.ts";
import { records, update } from "./helpers/store_fixtures.ts";

/** Every file under `dir` with its bytes and mtime. */
function snapshot(dir: string): Map<string, string> {
  const out = new Map<string, string>();
  const walk = (d: string) => {
    for (const e of Deno.readDirSync(d)) {
      const p = join(d, e.name);
      if (e.isDirectory) walk(p);
      else out.set(p, `${Deno.statSync(p).mtime?.getTime()} ${Deno.readTextFileSync(p)}`);
    }
  };
  walk(dir);
  return out;
}

Deno.test("a v1 (JSON) store is never read or touched; the first index builds v2 from the sources", () =>
  withTempDir(async (root) => {
    const a = sessionOf(await runIntendant(root, ["run", "first task"]));
    const key = `intendant:${a.id}`;
    const cache = join(root, "state", "cache", "message_search");
    // The previous version's store: a JSON generation and a manifest naming it, written by
    // the previous parser version (this one minus the segment format's bump).
    const v1 = join(cache, "v1");
    await Deno.mkdir(join(v1, "generations"), { recursive: true });
    const gen = "0123456789abcdef.json";
    await Deno.writeTextFile(
      join(v1, "generations", gen),
      JSON.stringify({ schema: 1, parser_version: 1, key, records: [], marks: [] }),
    );
    const old = PARSER_VERSION - SEGMENT_SCHEMA;
    await Deno.writeTextFile(
      join(v1, MANIFEST_FILE),
      JSON.stringify({
        schema: 1,
        parser_version: old,
        revision: 42,
        updated_at_ms: 0,
        sessions: {},
        tombstones: { [key]: Date.now() },
      }),
    );
    const before = snapshot(v1);

    const r = await runIntendant(root, ["index"]);
    assert.equal(r.code, 0, r.stderr);
    assert.deepEqual(snapshot(v1), before, "the v1 store is left exactly as it was");
    // v2 holds the session read from its source (v1's tombstone for it was never seen).
    const cfg = resolveConfig(hermeticEnv(root), { cwd: root });
    assert.equal(cfg.messageSearch.storeRoot, join(cache, "v2"));
    const { store } = await createMessageIndex(cfg);
    const m = await store.readManifest();
    assert.equal(m.parser_version, PARSER_VERSION);
    assert.deepEqual(Object.keys(m.sessions), [key]);
    assert.equal(m.sessions[key]!.records, 3);
    for (const g of m.sessions[key]!.generations) assert.match(g, /^[0-9a-f]{16}\.seg$/);

    // An older parser meeting the v2 store: refused, the manifest's bytes unchanged.
    const manifestPath = join(cfg.messageSearch.storeRoot, MANIFEST_FILE);
    const bytes = await Deno.readFile(manifestPath);
    const older = await openStore({
      root: cfg.messageSearch.storeRoot,
      parserVersion: PARSER_VERSION - 1,
      windowDays: null,
    });
    const rej = await older.publish([update("replace", "x", { recs: records("x", 0, 1) })]);
    assert.deepEqual(rej.rejected, [{ key: "codex:x", reason: "newer_parser" }]);
    assert.deepEqual(await Deno.readFile(manifestPath), bytes);
  }));
