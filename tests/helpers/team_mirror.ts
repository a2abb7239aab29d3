/**
 * The team replica's mirror check (issue 19), shared by the publisher's tests and the
 * reliability suite (G1): a machine's server rows must equal its local store exactly —
 * the same sessions, the same record ids per session (none duplicated, none lost), each
 * with the superseded flag deriveActive gives, its order and its original text (U+0000
 * restored), and the machine's counters agreeing. A duplicate id in one local session
 * counts once, as its first record by order.
 */
import assert from "node:assert/strict";
import {
  decodeRecords,
  deriveActive,
  type MessageRecord,
  type Store,
  type SupersessionMark,
} from "../../lib/message_search/mod.ts";
import { restoreText, type TeamSql } from "../../lib/team/mod.ts";

/** Every local record of `store` as the server must hold it: key → id → [superseded, ord, text]. */
export async function localView(
  store: Store,
): Promise<Map<string, Map<string, [boolean, number, string]>>> {
  const m = await store.readManifest();
  const out = new Map<string, Map<string, [boolean, number, string]>>();
  for (const [key, e] of Object.entries(m.sessions)) {
    const recs: MessageRecord[] = [];
    const marks: SupersessionMark[] = [];
    for (const g of e.generations) {
      const v = await store.loadSegment(g);
      recs.push(...decodeRecords(v));
      marks.push(...v.marks);
    }
    const active = deriveActive(recs, marks);
    // A duplicate id keeps the first by order (publish_diff.ts: the server key is unique).
    const byOrder = recs.map((_, i) => i).sort((x, y) => recs[x]!.order - recs[y]!.order);
    const view = new Map<string, [boolean, number, string]>();
    for (const i of byOrder) {
      const r = recs[i]!;
      const id = r.id.replaceAll("\u0000", "\uFFFD");
      if (!view.has(id)) view.set(id, [!active[i], r.order, r.text]);
    }
    out.set(key, view);
  }
  return out;
}

/** Asserts the server's rows of `machine` equal the local store's (no dup, none lost). */
export async function assertMirror(sql: TeamSql, machine: string, store: Store): Promise<void> {
  const local = await localView(store);
  const rows = await sql<
    {
      session_key: string;
      record_id: string;
      superseded: boolean;
      ord: number;
      text: string;
      nul_at: number[] | null;
    }[]
  >`
    SELECT session_key, record_id, superseded, ord, text, nul_at FROM intendant.records
    WHERE machine = ${machine}`;
  const server = new Map<string, Map<string, [boolean, number, string]>>();
  for (const r of rows) {
    if (!server.has(r.session_key)) server.set(r.session_key, new Map());
    server.get(r.session_key)!.set(r.record_id, [
      r.superseded,
      r.ord,
      restoreText(r.text, r.nul_at),
    ]);
  }
  const sessions = await sql<{ session_key: string; records: number }[]>`
    SELECT session_key, records FROM intendant.sessions WHERE machine = ${machine}`;
  assert.deepEqual(
    sessions.map((s) => s.session_key).sort(),
    [...local.keys()].sort(),
    `${machine}: session keys`,
  );
  for (const s of sessions) assert.equal(s.records, local.get(s.session_key)!.size);
  assert.deepEqual(server, new Map([...local].filter(([, v]) => v.size > 0)), `${machine}: rows`);
  const [mach] = await sql<{ records: string; sessions: string }[]>`
    SELECT records, sessions FROM intendant.machines WHERE name = ${machine}`;
  assert.equal(Number(mach!.records), rows.length, `${machine}: records counter`);
  assert.equal(Number(mach!.sessions), sessions.length, `${machine}: sessions counter`);
}
