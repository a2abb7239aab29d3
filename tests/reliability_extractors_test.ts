/**
 * Reliability-plan B4 for each of the five extractors: 1,000 malformed lines (invalid
 * JSON, wrong types, BOM, CRLF, invalid UTF-8, lone \ud800, 100k-deep `[`, 10 MiB
 * strings) interleaved among 1,000 valid lines in that tool's exact format, appended to
 * the fixture's live session and swept by the real indexer into a real store. Every valid
 * line (CRLF-terminated, BOM-prefixed, lone-surrogate, invalid-UTF-8-in-text, 512 KiB
 * and odd-Unicode variants included) must be indexed; every malformed line must be
 * counted exactly once in the shard's skipped counts; nothing may crash. The sweep runs in
 * a child (rel2_b4_child.ts) so its RSS peak is its own. Kimi refuses a whole session
 * over its 2 MiB record cap (spec: fail-closed), so its huge lines stay under the cap and
 * the 10 MiB lines get a session of their own, which must publish nothing.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import type { Source } from "../lib/message_search/mod.ts";
import type { B4Result } from "./helpers/rel2_b4_child.ts";
import { figure } from "./helpers/figures.ts";
import { DENO, REPO_ROOT, withTempDir } from "./helpers/temp.ts";

const CHILD = join(REPO_ROOT, "tests", "helpers", "rel2_b4_child.ts");
const SOURCES: Source[] = ["intendant", "codex", "claude-code", "kimi", "pi"];
const fmt = (n: number) => n.toLocaleString("en-US");

for (const source of SOURCES) {
  Deno.test(`B4 ${source}: 1,000 malformed lines among valid ones are counted, valid ones all indexed`, () =>
    withTempDir(async (dir) => {
      const out = await new Deno.Command(DENO, {
        args: ["run", "-A", CHILD, source, dir],
        stdout: "piped",
        stderr: "piped",
      }).output();
      const stderr = new TextDecoder().decode(out.stderr);
      assert.equal(out.code, 0, `child crashed: ${stderr}`);
      const r: B4Result = JSON.parse(
        new TextDecoder().decode(out.stdout).trim().split("\n").at(-1)!,
      );
      const pct = Math.floor((r.validIndexed / r.valid) * 1000) / 10;
      figure(
        "B4",
        `valid indexed: ${pct}%, malformed counted: ${
          fmt(r.malformedCounted)
        }, crashes: ${r.crashes}, ` +
          `sweep time: ${r.sweepS.toFixed(2)} s, RSS peak: ${
            Math.round(r.rssPeakMiB)
          } MiB (${source})`,
      );
      // deno-lint-ignore no-console
      console.log(
        `B4 ${source} detail: ${fmt(r.valid)} valid + ${fmt(r.malformed)} malformed lines, ` +
          `${r.fileMiB.toFixed(1)} MiB appended; malformed by category ${
            JSON.stringify(r.categories)
          }; ` +
          `counted by reason ${JSON.stringify(r.skippedByReason)}` +
          (r.kimiHuge
            ? `; 10 MiB lines in their own session: published ${r.kimiHuge.published}, ` +
              `oversized_record counted ${r.kimiHuge.oversizedCounted} (fail-closed by spec)`
            : ""),
      );
      assert.deepEqual(r.errors, []);
      assert.equal(r.crashes, 0);
      assert.equal(r.validIndexed, r.valid, "every valid line indexed");
      assert.equal(r.malformedCounted, r.malformed, "every malformed line counted exactly once");
      if (source === "kimi") {
        assert.equal(r.kimiHuge?.published, false);
        assert.equal(r.kimiHuge?.oversizedCounted, 1);
      }
    }));
}
