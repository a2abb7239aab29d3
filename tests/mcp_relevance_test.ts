/**
 * search_messages as an agent meets it (issue 27): the relevance suite's CI corpus
 * (tests/helpers/relevance_corpus.ts: 420 sessions in the real formats of eight sources),
 * served by the real program under its locked mcp profile to the official SDK client. The
 * natural-language questions are asked with default arguments (sort=relevance, 10
 * sessions): the target comes first for most of them (hit@1 printed, at least the FTS5
 * baseline's 0.469 on this corpus asserted loosely as ≥ 0.45), related groups are
 * labelled on their own header line, and the answers are compact: the median answer size
 * is printed and must be ≤ 6 KB; each hit carries a short id that read_session accepts.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import {
  RELEVANCE_PRESETS,
  relevanceEnv,
  writeRelevanceCorpus,
} from "./helpers/relevance_corpus.ts";
import { callTool, connectMcp } from "./helpers/mcp_client.ts";
import { withTempDir } from "./helpers/temp.ts";

const MEDIAN_MAX_BYTES = 6 * 1024;

Deno.test("mcp search_messages: questions find their sessions first, related is labelled, answers are small", async () => {
  await withTempDir(async (root) => {
    const corpus = await writeRelevanceCorpus(join(root, "corpus"), {
      preset: RELEVANCE_PRESETS.ci,
    });
    const env = {
      PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin",
      ...relevanceEnv(corpus.homes, root),
    };
    const { client, stderr } = await connectMcp(env);
    try {
      const natural = corpus.questions.filter((q) => q.kind === "natural");
      const sizes: number[] = [];
      let first = 0;
      let relatedLabelled = 0;
      let lastText = "";
      let lastTarget = "";
      for (const q of natural) {
        const r = await callTool(client, "search_messages", { query: q.q });
        assert.equal(r.isError, false, `${q.id}: ${r.text}\n${stderr()}`);
        sizes.push(new TextEncoder().encode(r.text).length);
        if (Deno.env.get("PEEK") && sizes.length === 2) console.log(r.text);
        const keys = [...r.text.matchAll(/^> session: (\S+)$/gm)].map((m) => m[1]!);
        if (keys[0] === q.target) {
          first++;
          lastText = r.text;
          lastTarget = q.target;
        }
        for (const m of r.text.matchAll(/^## \d+\. Session .*$/gm)) {
          if (/— RELATED: .+$/.test(m[0])) relatedLabelled++;
        }
        assert.match(r.text, /best match first/);
      }
      sizes.sort((a, b) => a - b);
      const median = sizes[Math.floor(sizes.length / 2)]!;
      const hit1 = first / natural.length;
      console.log(
        `MCP relevance: natural-language hit@1 ${first}/${natural.length} (${hit1.toFixed(3)}); ` +
          `answer bytes median ${median}, max ${sizes.at(-1)} (10 sessions a page); ` +
          `related groups labelled: ${relatedLabelled}`,
      );
      assert.ok(hit1 >= 0.45, `natural-language hit@1 ${hit1}`);
      assert.ok(relatedLabelled > 0, "related groups appear, labelled");
      assert.ok(median <= MEDIAN_MAX_BYTES, `median answer ${median} bytes`);
      // A hit id of the first group opens its session, centred on the hit.
      const id = /hit=(h[A-Za-z0-9_-]{12})/.exec(lastText)?.[1];
      assert.ok(id, lastText);
      const read = await callTool(client, "read_session", { session_key: lastTarget, locator: id });
      assert.equal(read.isError, false, read.text);
      assert.match(read.text, /<- located hit/);
      const bad = await callTool(client, "read_session", {
        session_key: lastTarget,
        locator: "hAAAAAAAAAAAA",
      });
      assert.equal(bad.isError, true);
      assert.match(bad.text, /Unknown hit id .*run search_messages again/);
    } finally {
      await client.close();
    }
  });
});
