/**
 * The publisher's pure diff: which sessions a publish touches (sig, deletes, tombstones,
 * quarantine, retention) and, per session, the inserts, deletes, rewrites and flag flips
 * by record id.
 */
import assert from "node:assert/strict";
import { record } from "../../tests/helpers/store_fixtures.ts";
import type { ManifestEntry } from "../message_search/mod.ts";
import {
  diffSession,
  planSessions,
  type ServerRecord,
  sessionRow,
  sessionSig,
} from "./publish_diff.ts";

function entry(o: Partial<ManifestEntry> = {}): ManifestEntry {
  return {
    source: "codex",
    session_id: "s",
    generations: ["0123456789abcdef.seg"],
    records: 3,
    newest_ts_ms: 2_000,
    oldest_ts_ms: 1_000,
    source_watermark: 0,
    source_fingerprint: "fp",
    cursors: {},
    state: null,
    source_gone: false,
    meta: { project: "/p", title: "t", parent_session_id: null, files: [] },
    skipped: {},
    published_at_ms: 0,
    ...o,
  };
}

Deno.test("sessionSig: generations, source_gone and meta each change it; cursors do not", () => {
  const base = sessionSig(entry());
  assert.notEqual(sessionSig(entry({ generations: ["fedcba9876543210.seg"] })), base);
  assert.notEqual(sessionSig(entry({ source_gone: true })), base);
  assert.notEqual(
    sessionSig(entry({ meta: { project: "/p", title: "t2", parent_session_id: null, files: [] } })),
    base,
  );
  assert.equal(sessionSig(entry({ source_watermark: 99, published_at_ms: 5 })), base);
});

Deno.test("planSessions: changed newest first, gone, tombstoned, quarantined, retention", () => {
  const same = entry({ newest_ts_ms: 5_000 });
  const manifest = {
    sessions: {
      "codex:same": same,
      "codex:new": entry({ newest_ts_ms: 9_000 }),
      "codex:moved": entry({ newest_ts_ms: 7_000, generations: ["1111111111111111.seg"] }),
      "codex:quar": entry({ generations: [], quarantined_at_ms: 1, newest_ts_ms: 8_000 }),
      "codex:old": entry({ newest_ts_ms: 100 }),
      "codex:oldlocal": entry({ newest_ts_ms: 50 }),
    },
    tombstones: { "codex:deleted": 1 },
  };
  const server = new Map([
    ["codex:same", { sig: sessionSig(same) }],
    ["codex:moved", { sig: "stale" }],
    ["codex:quar", { sig: "whatever" }],
    ["codex:old", { sig: "x" }],
    ["codex:deleted", { sig: "x" }],
    ["codex:aged", { sig: "x" }],
  ]);
  const plan = planSessions(manifest, server, { retentionCutoffMs: 1_000 });
  assert.deepEqual(plan.changed, ["codex:new", "codex:moved"]);
  assert.equal(plan.quarantined, 1);
  assert.deepEqual(
    plan.deleted.sort((a, b) => a.key < b.key ? -1 : 1),
    [
      { key: "codex:aged", tombstone: false, reason: "gone" },
      { key: "codex:deleted", tombstone: true, reason: "gone" },
      { key: "codex:old", tombstone: false, reason: "retention" },
    ],
  );
  // No retention: the old sessions are ordinary.
  const keep = planSessions(manifest, server, { retentionCutoffMs: null });
  assert.deepEqual(keep.changed, ["codex:new", "codex:moved", "codex:old", "codex:oldlocal"]);
});

Deno.test("diffSession: new, unchanged, flipped, rewritten, gone; duplicates once", () => {
  const recs = [record("s", 0), record("s", 1), record("s", 2), record("s", 3), record("s", 1)];
  const active = [true, false, true, true, true];
  const srv = (i: number, o: Partial<ServerRecord> = {}): ServerRecord => ({
    record_id: recs[i]!.id,
    superseded: false,
    ord: recs[i]!.order,
    ts_ms: recs[i]!.ts_ms,
    ...o,
  });
  const server = [
    srv(0), // unchanged
    srv(1), // active → superseded: flip
    srv(2, { ts_ms: 1 }), // rewritten
    { record_id: "gone", superseded: false, ord: 9, ts_ms: 9 },
  ];
  const d = diffSession(recs, active, server);
  assert.deepEqual(d.inserts, [2, 3]);
  assert.deepEqual(d.deletes.sort(), ["gone", recs[2]!.id].sort());
  assert.deepEqual(d.flips, [{ id: recs[1]!.id, superseded: true }]);
  assert.equal(d.count, 4);
  assert.equal(d.destructive, true);
  // Appends only: not destructive.
  const a = diffSession(recs.slice(0, 4), [true, true, true, true], [srv(0), srv(1)]);
  assert.deepEqual(a.inserts, [2, 3]);
  assert.equal(a.destructive, false);
  // Flip back (superseded → active) is destructive too.
  const back = diffSession([recs[0]!], [true], [srv(0, { superseded: true })]);
  assert.deepEqual(back.flips, [{ id: recs[0]!.id, superseded: false }]);
  assert.equal(back.destructive, true);
});

Deno.test("diffSession compares ids in stored form (U+0000 → U+FFFD)", () => {
  const r = { ...record("s", 0), id: "a\u0000b" };
  const d = diffSession([r], [true], [{
    record_id: "a\uFFFDb",
    superseded: false,
    ord: r.order,
    ts_ms: r.ts_ms,
  }]);
  assert.deepEqual([d.inserts, d.deletes, d.flips], [[], [], []]);
});

Deno.test("sessionRow: folded project, sig only when complete, U+0000 out of marks", () => {
  const e = entry({
    meta: { project: "/Ünï\u0000", title: "t\u0000", parent_session_id: null, files: [] },
  });
  const marks = [{ kind: "record_ids" as const, after_order: 1, ids: ["x\u0000"] }];
  const done = sessionRow("codex:s", e, { records: 3, marks, complete: true });
  assert.equal(done.sig, sessionSig(e));
  assert.equal(done.title, "t\uFFFD");
  assert.ok(!done.project_folded!.includes("\u0000"));
  assert.equal(done.project_folded, done.project_folded!.toLowerCase());
  assert.ok(!done.marks.includes("\\u0000"));
  assert.deepEqual(JSON.parse(done.marks)[0].ids, ["x\uFFFD"]);
  assert.equal(sessionRow("codex:s", e, { records: 3, marks, complete: false }).sig, "");
});
