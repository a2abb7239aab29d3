/**
 * Every API route on a real world (fixture homes of all tools + native sessions, real
 * index): message search with coverage and paging, the catalog, detail with locate,
 * rename (meta and overlay), delete with tombstone, replay, the live stream, deep
 * search and the report zip; and the CLI search matching the API.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { buildWorld, PORT } from "./helpers/world.ts";
import { runIntendant } from "./helpers/cli.ts";
import { withTempDir } from "./helpers/temp.ts";

Deno.test("message search: groups with highlights, coverage, filters and paging", () =>
  withTempDir(async (root) => {
    const w = await buildWorld(root);
    const r = await w.get("/api/sessions/message-search?q=caf%C3%A9");
    assert.equal(r.status, 200);
    const body = await r.json();
    assert.equal(body.state, "ready");
    assert.ok(body.groups.length >= 3, "café is said in several tools' fixtures");
    for (const g of body.groups) {
      for (const h of g.hits) {
        const text = new TextDecoder().decode(new TextEncoder().encode(h.snippet));
        assert.ok(h.ranges.length > 0);
        assert.ok(typeof h.locator === "string" && text.length > 0);
      }
    }
    assert.equal(body.coverage.state, "ready");
    for (const s of ["intendant", "codex", "claude-code", "kimi", "pi"]) {
      assert.ok(body.coverage.sources[s].sessions > 0, s);
    }
    assert.equal(body.coverage.legacy.ask_human_answers, "none");
    const only =
      await (await w.get("/api/sessions/message-search?q=caf%C3%A9&source=codex,pi&role=user"))
        .json();
    assert.ok(
      only.groups.every((g: { source: string; hits: { role: string }[] }) =>
        ["codex", "pi"].includes(g.source) && g.hits.every((h) => h.role === "user")
      ),
    );
    // Paging covers every group exactly once.
    const all = await (await w.get("/api/sessions/message-search?q=the&limit=100")).json();
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const page: { groups: { session_key: string }[]; cursor: string | null } = await (await w.get(
        `/api/sessions/message-search?q=the&limit=2${cursor ? `&cursor=${cursor}` : ""}`,
      )).json();
      seen.push(...page.groups.map((g) => g.session_key));
      cursor = page.cursor;
    } while (cursor);
    assert.deepEqual(seen, all.groups.map((g: { session_key: string }) => g.session_key));
    assert.equal((await w.get("/api/sessions/message-search")).status, 400);
  }));

Deno.test("catalog, detail with locate, rename, delete", () =>
  withTempDir(async (root) => {
    const w = await buildWorld(root);
    const list = await (await w.get("/api/sessions?limit=500")).json();
    const sources = new Set(list.sessions.map((s: { source: string }) => s.source));
    for (const s of ["intendant", "codex", "claude-code", "kimi", "pi"]) {
      assert.ok(sources.has(s), s);
    }
    assert.ok(list.sessions.every((s: { resume_command: string }) => s.resume_command.length > 0));
    // Jump to a hit.
    const hit =
      (await (await w.get("/api/sessions/message-search?q=OAuth")).json()).groups[0].hits[0];
    const key =
      (await (await w.get("/api/sessions/message-search?q=OAuth")).json()).groups[0].session_key;
    const d = await (await w.get(`/api/session/${encodeURIComponent(key)}?locate=${hit.locator}`))
      .json();
    assert.equal(d.locate.state, "resolved");
    assert.ok(d.entries[d.locate.entry_index]);
    const mal = await w.get(`/api/session/${encodeURIComponent(key)}?locate=%2e%2e%2f`);
    assert.equal(mal.status, 400);
    // ?q= lists every matching entry of the session, not only the page's.
    const path = `/api/session/${encodeURIComponent(key)}`;
    const withQ = await (await w.get(`${path}?locate=${hit.locator}&limit=1&q=oauth`)).json();
    const whole = await (await w.get(`${path}?limit=1000`)).json();
    const expected = whole.entries
      .filter((e: { text?: string }) => e.text?.toLowerCase().includes("oauth"))
      .map((e: { index: number }) => e.index);
    assert.ok(expected.length > 1);
    assert.deepEqual(withQ.hits, expected);
    assert.equal(withQ.hits_complete, true);
    assert.ok(withQ.hits.includes(withQ.locate.total_index));
    assert.equal((await w.get(`${path}?q=${"x".repeat(1001)}`)).status, 400);
    // Rename: native into meta, external into the overlay.
    const native = list.sessions.find((s: { source: string }) => s.source === "intendant");
    const ext = list.sessions.find((s: { source: string }) => s.source === "codex");
    const same = { origin: `http://127.0.0.1:${PORT}`, "content-type": "application/json" };
    assert.equal(
      (await w.get(`/api/session/${native.session_id}/name`, {
        method: "POST",
        headers: same,
        body: JSON.stringify({ name: "  Native  name " }),
      })).status,
      200,
    );
    assert.equal(
      (await w.get(`/api/session/${encodeURIComponent(ext.key)}/name`, {
        method: "POST",
        headers: same,
        body: JSON.stringify({ name: "Codex name" }),
      })).status,
      200,
    );
    const after = await (await w.get("/api/sessions?limit=500")).json();
    assert.equal(
      after.sessions.find((s: { key: string }) => s.key === native.key).name,
      "Native name",
    );
    assert.equal(after.sessions.find((s: { key: string }) => s.key === ext.key).name, "Codex name");
    // Delete: external refused; native tombstoned and gone from search.
    assert.equal(
      (await w.get(`/api/session/${encodeURIComponent(ext.key)}`, {
        method: "DELETE",
        headers: same,
      })).status,
      400,
    );
    const del = await w.get(`/api/session/${native.session_id}`, {
      method: "DELETE",
      headers: same,
    });
    assert.equal(del.status, 200);
    await w.indexer.sweep();
    const m = await w.store.readManifest();
    assert.ok(m.tombstones[native.key] !== undefined);
    assert.equal((await w.get(`/api/session/${native.session_id}`)).status, 404);
  }));

Deno.test("replay, live stream, deep search and report zip for a native session", () =>
  withTempDir(async (root) => {
    const w = await buildWorld(root);
    const key = w.homes.intendant!.appendTarget.key;
    const id = key.split(":")[1]!;
    const rep = await (await w.get(`/api/session/${id}/replay?limit=5`)).json();
    assert.equal(rep.start.kind, "replay_start");
    assert.equal(rep.start.provider, "mock");
    assert.equal(rep.entries.length, 5);
    assert.equal(rep.entries[0].kind, "session_started");
    assert.ok(rep.next_offset === 5 && rep.total > 5);
    // Live stream: lines appended after connecting arrive as SSE data.
    const ac = new AbortController();
    const res = await w.get(`/api/session/${id}/stream?from_line=${rep.total}`, {
      signal: ac.signal,
      headers: { origin: `http://127.0.0.1:${PORT}` },
    });
    assert.equal(res.headers.get("content-type"), "text/event-stream; charset=utf-8");
    const reader = res.body!.getReader();
    Deno.writeTextFileSync(
      w.homes.intendant!.appendTarget.path,
      w.homes.intendant!.appendTarget.userLine("live line", 9),
      { append: true },
    );
    let got = "";
    while (!got.includes("live line")) {
      const { value, done } = await reader.read();
      if (done) break;
      got += new TextDecoder().decode(value);
    }
    ac.abort();
    assert.match(got, new RegExp(`id: ${rep.total + 1}\\ndata: .*live line`));
    // Deep search reaches what the message index excludes (tool output, reasoning).
    const deep = await (await w.get("/api/sessions/search?q=NEVER-INDEX")).json();
    assert.ok(deep.hits.length >= 2);
    const msg = await (await w.get("/api/sessions/message-search?q=NEVER-INDEX")).json();
    assert.equal(msg.groups.length, 0);
    const zip = await w.get(`/api/session/${id}/report`);
    assert.equal(zip.headers.get("content-type"), "application/zip");
    const bytes = new Uint8Array(await zip.arrayBuffer());
    assert.deepEqual([...bytes.subarray(0, 2)], [0x50, 0x4b]);
  }));

Deno.test("`intendant search` answers from the store with the same results as the API", () =>
  withTempDir(async (root) => {
    const w = await buildWorld(root);
    const api = await (await w.get("/api/sessions/message-search?q=cookie&limit=50")).json();
    const cli = await runIntendant(root, ["search", "cookie", "--json", "--limit", "50"], {
      env: w.env,
    });
    assert.equal(cli.code, 0, cli.stderr);
    const j = JSON.parse(cli.stdout);
    assert.deepEqual(j.groups, api.groups);
    const human = await runIntendant(root, ["search", "cookie"], { env: w.env });
    assert.match(human.stdout, /«cookie»/i);
    assert.ok(join(root).length > 0);
  }));
