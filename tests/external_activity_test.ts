/**
 * External sessions' tool activity through the real HTTP app (GET /api/session/<key>):
 * for each of Codex, Claude Code, Kimi Code and Pi, a session written in the tool's exact
 * format by its fixture writer, indexed by the real indexer, shows every tool call once,
 * in order, under the message of the turn that made it (or in a `tool_calls` entry),
 * with status, exit code and output excerpts; context markers are entries of their own.
 * Jump-to-hit and paging still land on the right entries with the added rows. A grown
 * file is re-read (never a stale cached parse); a symlinked file is refused; a missing
 * or gone file leaves the prose served and says the tools are unavailable.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import type { DetailEntry, SessionDetail, ToolCallEntry } from "../lib/catalog/mod.ts";
import { encodeLocator } from "../lib/message_search/mod.ts";
import {
  type ActivitySession,
  type ExpectedEntry,
  type ExpectedTool,
  writeClaudeActivity,
  writeCodexActivity,
  writeKimiActivity,
  writePiActivity,
} from "./helpers/activity_sessions.ts";
import { shardRecords } from "./helpers/catalog_world.ts";
import { withTempDir } from "./helpers/temp.ts";
import { buildWorld, type World } from "./helpers/world.ts";

async function detail(w: World, key: string, query = "limit=1000"): Promise<SessionDetail> {
  const r = await w.get(`/api/session/${encodeURIComponent(key)}?${query}`);
  assert.equal(r.status, 200, await r.clone().text());
  return await r.json() as SessionDetail;
}

function checkTools(
  got: ToolCallEntry[] | undefined,
  want: ExpectedTool[] | undefined,
  at: string,
) {
  const g = got ?? [];
  const x = want ?? [];
  assert.equal(g.length, x.length, `${at}: ${JSON.stringify(g.map((t) => t.name))}`);
  x.forEach((t, i) => {
    const c = g[i]!;
    const where = `${at} tool ${i} (${t.name})`;
    assert.equal(c.name, t.name, where);
    assert.equal(c.input, t.input, where);
    assert.equal(c.status, t.status, where);
    assert.equal(c.exit_code, t.exit_code, where);
    assert.equal(typeof c.ts_ms, "number", where);
    assert.deepEqual(Object.keys(c.output).sort(), Object.keys(t.output).sort(), where);
    for (const [label, part] of Object.entries(t.output)) {
      const o = c.output[label]!;
      assert.ok(o.excerpt?.includes(part), `${where} ${label}: ${JSON.stringify(o.excerpt)}`);
      assert.equal(o.bytes, new TextEncoder().encode(o.excerpt).length, where);
      assert.equal(o.truncated, false, where);
    }
  });
}

function checkEntries(entries: DetailEntry[], want: ExpectedEntry[], key: string) {
  const got = entries.filter((e) => e.kind !== "cut");
  const show = got.map((e) => `${e.kind}:${e.role ?? ""}:${e.text?.slice(0, 20) ?? ""}`);
  assert.equal(got.length, want.length, `${key}: ${JSON.stringify(show)}`);
  want.forEach((x, i) => {
    const e = got[i]!;
    const at = `${key} entry ${i}`;
    assert.equal(e.kind, x.kind, `${at}: ${JSON.stringify(show)}`);
    if (x.kind === "message") {
      assert.equal(e.role, x.role, at);
      assert.equal(e.text, x.text, at);
      assert.equal(e.superseded, false, at);
      checkTools(e.tools, x.tools, at);
    } else if (x.kind === "tool_calls") {
      assert.equal((e.detail as { by: string }).by, x.by, at);
      assert.equal(e.subagent, x.subagent ?? false, at);
      assert.equal(e.superseded, false, at);
      assert.equal(e.text, undefined, at);
      checkTools(e.tools, x.tools, at);
    } else {
      const d = e.detail as { kind: string; summary?: { excerpt: string } };
      assert.equal(d.kind, x.snapshot, at);
      if (x.summary) assert.ok(d.summary?.excerpt.includes(x.summary), at);
      assert.equal(e.text, undefined, `${at}: a summary is not prose`);
      assert.equal(e.tools, undefined, at);
    }
  });
}

async function writeAll(w: World): Promise<ActivitySession[]> {
  const now = Date.now();
  const s = [
    await writeCodexActivity(w.env.CODEX_HOME!, now),
    await writeClaudeActivity(join(w.env.CLAUDE_CONFIG_DIR!, "projects"), now),
    await writeKimiActivity(w.env.KIMI_CODE_HOME!, now),
    await writePiActivity(w.env.PI_CODING_AGENT_DIR!, now),
  ];
  await w.indexer.sweep();
  return s;
}

Deno.test("GET /api/session shows every external tool call once, under its turn's message, with status and output", () =>
  withTempDir(async (root) => {
    const w = await buildWorld(root);
    for (const s of await writeAll(w)) {
      const d = await detail(w, s.key);
      assert.equal(d.activity?.state, "ok", `${s.key}: ${JSON.stringify(d.activity)}`);
      assert.deepEqual(d.activity!.skipped, s.skipped, s.key);
      assert.equal(d.total, d.entries.length);
      d.entries.forEach((e, i) => assert.equal(e.index, i));
      checkEntries(d.entries, s.entries, s.key);
      // The prose is the shard's, untouched: same records, same order.
      const records = await shardRecords(w.store, s.key);
      const msgs = d.entries.filter((e) => e.kind === "message");
      assert.deepEqual(msgs.map((e) => e.record_id), records.map((r) => r.id), s.key);
      assert.equal(d.session.message_count, records.length);

      // Jump-to-hit lands on the same text; total_index counts the added rows.
      for (const r of records) {
        const loc = encodeLocator(r.locator);
        const p = await detail(w, s.key, `locate=${loc}&limit=3`);
        assert.equal(p.locate?.state, "resolved", `${s.key} ${r.id}`);
        if (p.locate?.state !== "resolved") continue;
        assert.equal(p.locate.total_index, d.entries.findIndex((e) => e.record_id === r.id));
        assert.equal(p.entries[p.locate.entry_index]!.text, r.text);
      }
      // Pages slice the same list.
      for (let offset = 0; offset < d.total; offset += 3) {
        const p = await detail(w, s.key, `offset=${offset}&limit=3`);
        assert.deepEqual(p.entries, d.entries.slice(offset, offset + 3));
      }
    }
    // The shared fixtures' tools show too: Claude S1's Read sits under its first answer,
    // and its subagent transcript (a hardlinked twin) is refused, not followed.
    const s1 = Object.keys(w.homes["claude-code"]!.expected)[0]!;
    const d1 = await detail(w, s1);
    const first = d1.entries.find((e) => e.text === "I'll look at the menu component first.")!;
    assert.deepEqual(first.tools?.map((t) => [t.name, t.status]), [["Read", "ok"]]);
    assert.equal(d1.activity?.state, "partial");
    assert.deepEqual(d1.activity?.files.map((f) => f.reason), [undefined, "hardlinked"]);
  }));

Deno.test("external activity: a grown file is re-read, a symlink refused, a missing or gone file leaves the prose served", () =>
  withTempDir(async (root) => {
    const w = await buildWorld(root);
    const [, claude, , pi] = await writeAll(w);
    const last = (d: SessionDetail) => d.entries.at(-1)!.tools!.at(-1)!;

    // The pending Pi call gets its result appended: the next page shows it (no stale parse).
    assert.equal(last(await detail(w, pi!.key)).status, "pending");
    const leaf = JSON.parse((await Deno.readTextFile(pi!.path)).trimEnd().split("\n").at(-1)!).id;
    const done = {
      type: "message",
      id: "0ac7d0e5",
      parentId: leaf,
      timestamp: new Date().toISOString(),
      message: {
        role: "toolResult",
        toolCallId: "toolu_rm",
        toolName: "bash",
        content: [{ type: "text", text: "removed" }],
        isError: false,
        timestamp: Date.now(),
      },
    };
    await Deno.writeTextFile(pi!.path, JSON.stringify(done) + "\n", { append: true });
    const grown = last(await detail(w, pi!.key));
    assert.equal(grown.status, "ok");
    assert.equal(grown.output.output?.excerpt, "removed");

    // A symlinked transcript is refused (never followed); its sibling is still read.
    const moved = join(root, "elsewhere.jsonl");
    await Deno.rename(claude!.path, moved);
    await Deno.symlink(moved, claude!.path);
    const dc = await detail(w, claude!.key);
    assert.equal(dc.activity?.state, "partial");
    assert.deepEqual(dc.activity?.files.map((f) => [f.state, f.reason]), [
      ["unavailable", "symlink"],
      ["ok", undefined],
    ]);
    const records = await shardRecords(w.store, claude!.key);
    const msgs = dc.entries.filter((e) => e.kind === "message");
    assert.deepEqual(msgs.map((e) => e.text), records.map((r) => r.text));
    const mainTools = dc.entries.filter((e) => e.tools && !e.subagent);
    assert.deepEqual(mainTools, [], "the refused main file contributes nothing");
    assert.deepEqual(dc.entries.filter((e) => e.kind === "tool_calls").map((e) => e.subagent), [
      true,
    ]);

    // A missing file: the prose still renders, the tools are said to be unavailable.
    await Deno.remove(pi!.path);
    const dm = await detail(w, pi!.key);
    assert.equal(dm.activity?.state, "unavailable");
    assert.match(dm.activity!.reason!, /missing/);
    assert.deepEqual(dm.entries.map((e) => e.kind), dm.entries.map(() => "message"));
    assert.ok(dm.entries.every((e) => e.tools === undefined));
    assert.deepEqual(
      dm.entries.map((e) => e.text),
      (await shardRecords(w.store, pi!.key)).map((r) => r.text),
    );
    // Once a sweep marks the source gone, the reason says so.
    await w.indexer.sweep();
    const dg = await detail(w, pi!.key);
    assert.equal(dg.session.source_gone, true);
    assert.equal(dg.activity?.state, "unavailable");
    assert.match(dg.activity!.reason!, /gone/);
    assert.equal(dg.entries.length, dm.entries.length);
  }));
