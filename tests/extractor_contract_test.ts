/**
 * The one contract every extractor honours, run against all twelve over their fixture
 * homes (written in the real tools' exact formats): full extraction matches what the
 * fixture says, byte-exact Unicode; nothing from the never-indexed list is published;
 * records are stable across re-runs; extraction is hermetic (a child with no env access,
 * reading only the fixture); a torn trailing line is left for the next sweep and picked
 * up once complete; malformed lines are counted, never fatal. A database source (OpenCode,
 * Goose) has no lines to tear: a message its writer inserts is indexed exactly once.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import {
  closeSharedSnapshots,
  decodeRecords,
  deriveActive,
  type ExtractOutcome,
  Indexer,
  openStore,
  PARSER_VERSION,
} from "../lib/message_search/mod.ts";
import { ALL_FIXTURES } from "./fixtures/all.ts";
import { type AnyFixtureHome, type DbAppendTarget, NEVER_INDEX_MARK } from "./fixtures/types.ts";
import { DENO, REPO_ROOT, withTempDir } from "./helpers/temp.ts";

async function extractAll(
  home: AnyFixtureHome,
): Promise<
  Map<string, { id: string; role: string; text: string; active: boolean; subagent: boolean }[]>
> {
  const ex = home.extractor();
  const out = new Map<
    string,
    { id: string; role: string; text: string; active: boolean; subagent: boolean }[]
  >();
  for (const unit of (await ex.discover()).units) {
    const o: ExtractOutcome = await ex.extract(unit, null, { now: Date.now() });
    if (o.kind !== "replace" && o.kind !== "append") continue;
    const flags = deriveActive(o.records, o.marks);
    out.set(
      unit.key,
      o.records.map((r, i) => ({
        id: r.id,
        role: r.role,
        text: r.text,
        active: flags[i]!,
        subagent: r.subagent,
      })),
    );
  }
  return out;
}

for (const fx of ALL_FIXTURES) {
  Deno.test(`extractor contract: ${fx.source}`, async (t) => {
    await withTempDir(async (dir) => {
      // One clock for this build and the hermetic child's: sources whose ids carry the
      // creation time (OpenCode's, Goose's per-day counter) then write the same ids.
      const now = Date.now();
      const home = await fx.build(join(dir, "home"), { now });

      await t.step(
        "full extraction yields exactly the expected records, Unicode byte-exact",
        async () => {
          const got = await extractAll(home);
          for (const [key, want] of Object.entries(home.expected)) {
            const have = got.get(key) ?? [];
            assert.deepEqual(
              have.map((r) => ({
                role: r.role,
                text: r.text,
                superseded: !r.active,
                subagent: r.subagent,
              })),
              want,
              `session ${key}`,
            );
          }
          const withRecords = [...got.entries()].filter(([, rs]) => rs.length > 0).map(([k]) => k)
            .sort();
          assert.deepEqual(
            withRecords,
            Object.keys(home.expected).filter((k) => home.expected[k]!.length > 0).sort(),
          );
          const texts = Object.values(home.expected).flat().map((r) => r.text).join("\n");
          assert.ok(texts.includes("\u0301"), "fixture has NFD text");
          assert.ok(
            /[\u00c0-\u024f]/.test(texts.normalize("NFC")) && texts !== texts.normalize("NFD"),
            "fixture has NFC text",
          );
        },
      );

      await t.step("nothing from the never-indexed list is ever published", async () => {
        for (const rs of (await extractAll(home)).values()) {
          for (const r of rs) {
            assert.ok(!r.text.includes(NEVER_INDEX_MARK), `leaked: ${r.text.slice(0, 80)}`);
          }
        }
      });

      await t.step("records are stable across re-runs", async () => {
        const a = await extractAll(home);
        const b = await extractAll(home);
        assert.deepEqual([...a.entries()], [...b.entries()]);
        for (const rs of a.values()) {
          assert.equal(new Set(rs.map((r) => r.id)).size, rs.length, "ids unique");
        }
      });

      await t.step(
        "hermetic: a child with no env access reading only the fixture extracts the same",
        async () => {
          const childDir = join(dir, "child");
          await Deno.mkdir(childDir);
          const out = await new Deno.Command(DENO, {
            args: [
              "run",
              `--allow-read=${childDir},${REPO_ROOT}`,
              `--allow-write=${childDir}`,
              "--no-prompt",
              join(REPO_ROOT, "tests", "helpers", "contract_child.ts"),
              fx.source,
              childDir,
              String(now),
            ],
            clearEnv: true,
            env: { NO_COLOR: "1" },
            stdout: "piped",
            stderr: "piped",
          }).output();
          assert.equal(out.code, 0, new TextDecoder().decode(out.stderr));
          const child = JSON.parse(new TextDecoder().decode(out.stdout)) as Record<
            string,
            { text: string; active: boolean }[]
          >;
          for (const [key, want] of Object.entries(home.expected)) {
            assert.deepEqual(child[key]?.map((r) => r.text) ?? [], want.map((r) => r.text), key);
          }
        },
      );

      if (home.appendTarget.kind === "db") {
        const target = home.appendTarget;
        await t.step(
          "a message the tool's writer inserts is indexed exactly once",
          () => dbAppendStep(home, target, join(dir, "store")),
        );
        closeSharedSnapshots();
        return;
      }
      const target = home.appendTarget;
      await t.step(
        "a torn trailing line waits for the next sweep; malformed lines are counted, never fatal",
        async () => {
          const store = await openStore({
            root: join(dir, "store"),
            parserVersion: PARSER_VERSION,
            windowDays: 14,
          });
          const indexer = new Indexer({ store, extractors: [home.extractor()], windowDays: 14 });
          await indexer.sweep();
          const key = target.key;
          const before = (await store.readManifest()).sessions[key]!;
          const text = `contract append é漢字 ${fx.source}`;
          const line = new TextEncoder().encode(target.userLine(text, 1));
          // Cut inside the multibyte "漢" so the torn half ends mid-character.
          const cut = new TextEncoder().encode(target.userLine(text, 1).split("漢")[0]!).length +
            1;
          const f = await Deno.open(target.path, { append: true });
          await f.write(line.subarray(0, cut));
          await indexer.sweep();
          const texts = async () => {
            const e = (await store.readManifest()).sessions[key]!;
            const segs = await Promise.all(e.generations.map((g) => store.loadSegment(g)));
            return segs.flatMap((s) => decodeRecords(s).map((r) => r.text));
          };
          assert.ok(!(await texts()).includes(text), "torn half must not be indexed");
          await f.write(line.subarray(cut));
          await indexer.sweep();
          assert.equal(
            (await texts()).filter((x) => x === text).length,
            1,
            "completed line indexed exactly once",
          );
          const skippedBefore = Object.values((await store.readManifest()).sessions[key]!.skipped)
            .reduce((a, b) => a + b, 0);
          await f.write(new TextEncoder().encode("{this is not json\n"));
          await f.write(new Uint8Array([0x7b, 0x22, 0xff, 0xfe, 0x22, 0x7d, 0x0a]));
          const after = `after garbage ${fx.source}`;
          await f.write(new TextEncoder().encode(target.userLine(after, 2)));
          f.close();
          await indexer.sweep();
          const e = (await store.readManifest()).sessions[key]!;
          const skippedAfter = Object.values(e.skipped).reduce((a, b) => a + b, 0);
          assert.ok(
            skippedAfter - skippedBefore >= 2,
            `malformed lines counted (${skippedBefore} → ${skippedAfter})`,
          );
          assert.equal(
            (await texts()).filter((x) => x === after).length,
            1,
            "the line after the garbage is indexed",
          );
          assert.ok(e.records >= before.records + 2);
        },
      );
    });
  });
}

async function dbAppendStep(home: AnyFixtureHome, target: DbAppendTarget, root: string) {
  const store = await openStore({ root, parserVersion: PARSER_VERSION, windowDays: 14 });
  const indexer = new Indexer({ store, extractors: [home.extractor()], windowDays: 14 });
  await indexer.sweep();
  const before = (await store.readManifest()).sessions[target.key]!;
  assert.ok(before, `${target.key} indexed`);
  const texts = async () => {
    const e = (await store.readManifest()).sessions[target.key]!;
    const segs = await Promise.all(e.generations.map((g) => store.loadSegment(g)));
    return segs.flatMap((s) => decodeRecords(s).map((r) => r.text));
  };
  const text = `contract insert é漢字 ${home.source}`;
  target.insertUser(text, 1);
  await indexer.sweep();
  await indexer.sweep();
  assert.equal((await texts()).filter((x) => x === text).length, 1, "inserted once, indexed once");
  const after = (await store.readManifest()).sessions[target.key]!;
  assert.ok(after.records >= before.records + 1);
}
