import assert from "node:assert/strict";
import { setOverlayName } from "../session_log/mod.ts";
import { buildCatalogWorld } from "../../tests/helpers/catalog_world.ts";
import { withTempDir } from "../../tests/helpers/temp.ts";
import { listSessions } from "./list_sessions.ts";
import { sessionDetail } from "./session_detail.ts";
import { resumeCommand, shellQuote } from "./resume.ts";

Deno.test("listSessions() lists native and external sessions, newest first, names overlaid, paged", () =>
  withTempDir(async (root) => {
    const w = await buildCatalogWorld(root);
    const m = await w.store.readManifest();
    const externals = Object.values(m.sessions).filter((e) => e.source !== "intendant");
    // Fixture natives (new-era + legacy) + writeNativeSession ×2 + the runner session.
    const nativeCount = 2 + w.natives.length + 1;
    const codex = externals.find((e) => e.source === "codex")!;
    await setOverlayName(w.namesPath, {
      source: "codex",
      sessionId: codex.session_id,
      name: "  My   codex  thread ",
    });
    const all = await listSessions(w.deps, { limit: 1000 });
    assert.equal(all.total, nativeCount + externals.length);
    assert.equal(all.next_offset, null);
    const times = all.sessions.map((s) => s.updated_ms ?? -Infinity);
    assert.deepEqual(times, [...times].sort((a, b) => b - a), "newest first");
    const byKey = new Map(all.sessions.map((s) => [s.key, s]));
    assert.equal(byKey.get(`codex:${codex.session_id}`)!.name, "My codex thread");
    const runner = byKey.get(`intendant:${w.runner!.id}`)!;
    assert.equal(runner.name, "Runner session", "native name from meta");
    assert.equal(runner.title, "Inspect the project");
    assert.equal(runner.status, "completed");
    assert.equal(runner.resume_command, `intendant run --resume ${w.runner!.id} "…"`);
    // Native counts equal what the detail view renders as messages.
    for (const s of all.sessions.filter((x) => x.source === "intendant")) {
      const d = await sessionDetail(w.deps, s.key, { limit: 1000 });
      assert.equal(s.message_count, d.entries.filter((e) => e.kind === "message").length, s.key);
      assert.equal(d.session.updated_ms, s.updated_ms, s.key);
    }
    for (const e of externals) {
      const s = byKey.get(`${e.source}:${e.session_id}`)!;
      assert.equal(s.message_count, e.records);
      assert.equal(s.updated_ms, e.newest_ts_ms);
      assert.equal(s.parent_session_id, e.meta.parent_session_id);
    }
    // Paging covers every session exactly once, in the same order.
    const seen: string[] = [];
    for (let offset: number | null = 0; offset !== null;) {
      const page: Awaited<ReturnType<typeof listSessions>> = await listSessions(w.deps, {
        limit: 3,
        offset,
      });
      seen.push(...page.sessions.map((s) => s.key));
      offset = page.next_offset;
    }
    assert.deepEqual(seen, all.sessions.map((s) => s.key));
  }));

Deno.test("listSessions() filters by source and by the folded metadata query", () =>
  withTempDir(async (root) => {
    const w = await buildCatalogWorld(root, { runner: false });
    const only = await listSessions(w.deps, { source: ["pi", "kimi"], limit: 1000 });
    assert.ok(only.sessions.length > 0);
    assert.ok(only.sessions.every((s) => s.source === "pi" || s.source === "kimi"));
    // "CAFÉ" (NFC, upper) finds "café" in titles and projects of several tools, and NFD too.
    const cafe = await listSessions(w.deps, { q: "CAFÉ", limit: 1000 });
    const nfd = await listSessions(w.deps, { q: "cafe\u0301", limit: 1000 });
    assert.deepEqual(nfd.sessions.map((s) => s.key), cafe.sessions.map((s) => s.key));
    assert.ok(new Set(cafe.sessions.map((s) => s.source)).size >= 3);
    for (const s of cafe.sessions) {
      assert.ok(
        [s.name, s.title, s.project].some((v) =>
          v?.toLowerCase().normalize("NFC").includes("café")
        ),
        s.key,
      );
    }
    // An id prefix is metadata too.
    const one = w.natives[0]!;
    const byId = await listSessions(w.deps, { q: one.id.slice(0, 13).toUpperCase() });
    assert.deepEqual(byId.sessions.map((s) => s.session_id), [one.id]);
    assert.equal((await listSessions(w.deps, { q: "no such words anywhere" })).total, 0);
    await assert.rejects(() => listSessions(w.deps, { limit: 0 }), RangeError);
    await assert.rejects(() => listSessions(w.deps, { offset: -1 }), RangeError);
  }));

Deno.test("resumeCommand() uses each tool's documented form and quotes what came from files", () => {
  const f = { project: "/home/dev/café shop", files: ["/h/.pi/agent/sessions/x y/s.jsonl"] };
  assert.equal(
    resumeCommand({ source: "codex", sessionId: "0190-ab", ...f }),
    "codex resume 0190-ab",
  );
  assert.equal(
    resumeCommand({ source: "claude-code", sessionId: "d7ec", ...f }),
    "cd '/home/dev/café shop' && claude --resume d7ec",
  );
  assert.equal(
    resumeCommand({ source: "kimi", sessionId: "session_1", ...f }),
    "cd '/home/dev/café shop' && kimi --session session_1",
  );
  assert.equal(
    resumeCommand({ source: "pi", sessionId: "p", ...f }),
    "pi --session '/h/.pi/agent/sessions/x y/s.jsonl'",
  );
  assert.equal(
    resumeCommand({ source: "pi", sessionId: "p", project: null, files: [] }),
    "pi --resume",
  );
  assert.equal(shellQuote("it's $(rm -rf ~)"), `'it'\\''s $(rm -rf ~)'`);
});

Deno.test("q matches every word (or quoted phrase) anywhere in the catalog, not only the first page", () =>
  withTempDir(async (root) => {
    const w = await buildCatalogWorld(root);
    const all = await listSessions(w.deps, { limit: 1000 });
    // The oldest session: on the last page of a one-per-page listing.
    const oldest = all.sessions[all.sessions.length - 1]!;
    const words = (oldest.title ?? oldest.session_id).split(/\s+/).slice(0, 2);
    const r = await listSessions(w.deps, { q: words.join("  ").toUpperCase(), limit: 1 });
    assert.ok(r.total >= 1);
    const keys: string[] = [];
    for (let offset = 0; offset < r.total; offset++) {
      keys.push(...(await listSessions(w.deps, { q: words.join(" "), limit: 1, offset })).sessions
        .map((s) => s.key));
    }
    assert.ok(keys.includes(oldest.key), "the oldest session is found by its words");
    // Words are ANDed, in any order; a quoted phrase must occur as written.
    const reversed = await listSessions(w.deps, { q: [...words].reverse().join(" "), limit: 1000 });
    assert.ok(reversed.sessions.some((s) => s.key === oldest.key));
    const both = await listSessions(w.deps, { q: `${words[0]} zzqqxx-not-there`, limit: 1000 });
    assert.equal(both.total, 0);
  }));
