import assert from "node:assert/strict";
import { join } from "node:path";
import { parseEvents } from "../session_log/mod.ts";
import { deriveActive, type SupersessionMark } from "../message_search/mod.ts";
import { buildCatalogWorld, shardRecords, TOOL_MARK } from "../../tests/helpers/catalog_world.ts";
import { withTempDir } from "../../tests/helpers/temp.ts";
import { sessionDetail } from "./session_detail.ts";
import type { DetailEntry } from "./types.ts";

type Detail = Record<string, unknown>;

Deno.test("native detail of a real run: messages, the command as a tool call with output, the rollback cut", () =>
  withTempDir(async (root) => {
    const w = await buildCatalogWorld(root, { natives: 0 });
    const { id, dir } = w.runner!;
    const d = await sessionDetail(w.deps, id.slice(0, 8), { limit: 1000 });
    assert.equal(d.session.key, `intendant:${id}`);
    assert.equal(d.total, d.entries.length);
    const kinds = d.entries.map((e) => e.kind);
    for (const k of ["session_start", "message", "session_end", "cut"]) {
      assert.ok(kinds.includes(k), k);
    }
    // The command renders once, on its turn's message: no batch/command/output/approval rows.
    for (const k of ["command_batch", "command", "command_output", "approval"]) {
      assert.ok(!kinds.includes(k), k);
    }
    assert.equal(kinds.at(-1), "cut", "the offline rollback is the last line");
    // Original ts_ms kept: each entry's ts_ms is its line's.
    const { events } = parseEvents(Deno.readFileSync(join(dir, "session.jsonl")));
    const byLine = new Map(events.map((e) => [e.lineNo, e.event]));
    for (const e of d.entries) {
      assert.equal(e.ts_ms, byLine.get(e.line!)!.ts_ms, `${e.kind} line ${e.line}`);
      assert.equal((e.detail as Detail).ts, byLine.get(e.line!)!.ts);
    }
    const msgs = d.entries.filter((e) => e.kind === "message");
    assert.deepEqual(msgs.map((e) => [e.role, e.text, e.superseded]), [
      ["user", "Inspect the project", false],
      ["assistant", "Let me look around the project.", false],
      ["assistant", "The second answer, later rolled back.", true],
      ["assistant", "All done.", true],
    ]);
    const withTools = d.entries.filter((e) => e.tools?.length);
    assert.equal(withTools.length, 1);
    assert.equal(withTools[0]!.text, "Let me look around the project.");
    const [call] = withTools[0]!.tools!;
    assert.equal(call!.name, "shell");
    assert.equal(call!.input, `echo ${TOOL_MARK}; echo err-line >&2`);
    assert.equal(call!.exit_code, 0);
    assert.equal(call!.status, "ok");
    assert.equal(call!.output.stdout!.excerpt, `${TOOL_MARK}\n`);
    assert.equal(call!.output.stderr!.excerpt, "err-line\n");
    assert.equal((call!.detail!.approval as Detail).state, "auto");
    // Once: not again as agent_input's batch, approvals, or agent_output's stdout.txt.
    assert.equal(JSON.stringify(d.entries).split(TOOL_MARK).length - 1, 2, "input + stdout");
    // The canonical assistant rows render no entry of their own: one entry per answer.
    assert.equal(events.filter((e) => e.event.event === "conversation_message").length, 4);
    // Paging slices the same list.
    const all = d.entries;
    for (
      const [offset, limit] of [[0, 3], [3, 4], [all.length - 2, 10], [all.length + 5, 10]] as const
    ) {
      const p = await sessionDetail(w.deps, `intendant:${id}`, { offset, limit });
      assert.equal(p.offset, offset);
      assert.equal(p.total, all.length);
      assert.deepEqual(p.entries, all.slice(offset, offset + limit));
    }
    await assert.rejects(() => sessionDetail(w.deps, id, { limit: 1001 }), RangeError);
    await assert.rejects(() => sessionDetail(w.deps, id, { offset: -1 }), RangeError);
  }));

Deno.test("legacy native detail: task, delivered steer and follow-up as user messages, inferred times", () =>
  withTempDir(async (root) => {
    const w = await buildCatalogWorld(root, { runner: false, natives: 0 });
    const d = await sessionDetail(w.deps, "0legacy0-aaaa-4bbb-8ccc-000000000001", { limit: 1000 });
    const msgs = d.entries.filter((e) => e.kind === "message");
    assert.deepEqual(msgs.map((e) => [e.role, e.text]), [
      ["user", "Fix the login redirect loop"],
      ["assistant", "I'll trace the redirect: the session cookie is set after the 302."],
      ["user", "use the OAuth middleware instead"],
      ["assistant", "Switched to the OAuth middleware; naïve cookie code removed — 完了."],
      ["user", "also add a regression test"],
    ]);
    const times = msgs.map((e) => e.ts_ms!);
    assert.ok(times.every((t, i) => i === 0 || t >= times[i - 1]!), "midnight wrap inferred");
    assert.ok(msgs.every((e) => (e.detail as Detail).ts_inferred === true));
    assert.equal(d.session.message_count, 5);
  }));

Deno.test("external detail: every record in order with derived superseded flags and cut entries", () =>
  withTempDir(async (root) => {
    const w = await buildCatalogWorld(root, { runner: false, natives: 0 });
    const m = await w.store.readManifest();
    let cuts = 0;
    for (const [key, e] of Object.entries(m.sessions)) {
      if (e.source === "intendant") continue;
      const records = await shardRecords(w.store, key);
      const marks: SupersessionMark[] = [];
      for (const g of e.generations) marks.push(...(await w.store.loadSegment(g)).marks);
      const active = deriveActive(records, marks);
      const d = await sessionDetail(w.deps, key, { limit: 1000 });
      const msgs = d.entries.filter((x: DetailEntry) => x.kind === "message");
      assert.deepEqual(msgs.map((x) => x.record_id), records.map((r) => r.id), key);
      assert.deepEqual(msgs.map((x) => x.superseded), active.map((a) => !a), key);
      assert.deepEqual(msgs.map((x) => x.subagent), records.map((r) => r.subagent), key);
      const cutEntries = d.entries.filter((x) => x.kind === "cut");
      assert.equal(cutEntries.length, marks.length, key);
      cuts += cutEntries.length;
      assert.equal(d.session.message_count, e.records);
      assert.equal(d.session.source_gone, false);
    }
    assert.ok(cuts > 0, "fixtures carry rollbacks/undos/branches");
  }));
