/**
 * Loads sessions straight into a migrated team database as if published at team revision
 * `rev` — machines, session rows, record rows (lib/team toRecordRow, superseded from
 * deriveActive), each machine's counters, its revision and its batch row (the "as of"
 * history cursors read) and the team revision — so the readers (team search, the API, the
 * MCP server) are tested without the publisher. One loader for every reader test.
 */
import {
  deriveActive,
  fold,
  hash16Of,
  type MessageRecord,
  type Source,
  type SupersessionMark,
} from "../../lib/message_search/mod.ts";
import { RECORD_COLUMNS, type TeamDb, toRecordRow } from "../../lib/team/mod.ts";

/** One session to load. */
export interface TeamRowsSession {
  machine: string;
  /** The local session key (`source:session_id`). */
  key: string;
  source: Source;
  id: string;
  title: string | null;
  project: string | null;
  recs: readonly MessageRecord[];
  marks?: readonly SupersessionMark[];
}

/** Loads `sessions` as published at team revision `rev` (revisions only ever rise). */
export async function loadTeamRows(
  db: TeamDb,
  sessions: readonly TeamRowsSession[],
  rev: number,
): Promise<void> {
  const { sql } = db;
  for (const s of sessions) {
    const marks = s.marks ?? [];
    const active = deriveActive([...s.recs], [...marks]);
    await sql`INSERT INTO intendant.machines (name) VALUES (${s.machine}) ON CONFLICT DO NOTHING`;
    const ts = s.recs.map((r) => r.ts_ms);
    const pf = s.project === null ? null : fold(s.project).replaceAll("\u0000", "\uFFFD");
    await sql`INSERT INTO intendant.sessions (machine, session_key, source, session_id, title,
        project, project_folded, newest_ts_ms, oldest_ts_ms, records, sig, marks, rev_added,
        rev_changed)
      VALUES (${s.machine}, ${s.key}, ${s.source}, ${s.id}, ${s.title}, ${s.project},
        ${pf}, ${Math.max(...ts)}, ${Math.min(...ts)}, ${s.recs.length},
        'sig', ${sql.json(marks as never)}, ${rev}, ${rev})`;
    const params: unknown[] = [];
    const tuples = s.recs.map((r, i) => {
      const row = toRecordRow(r, {
        machine: s.machine,
        sessionKey: s.key,
        superseded: !active[i],
        rev,
      });
      return `(${
        RECORD_COLUMNS.map((c) => `$${params.push(row[c])}${c === "nul_at" ? "::int[]" : ""}`)
          .join(", ")
      })`;
    });
    await sql.unsafe(
      `INSERT INTO intendant.records (${RECORD_COLUMNS.join(", ")}) VALUES ${tuples.join(", ")}`,
      params as never[],
    );
    await sql`UPDATE intendant.machines SET last_publish_at = now(), last_publish_rev = ${rev},
        revision = GREATEST(revision, ${rev}), sessions = sessions + 1,
        records = records + ${s.recs.length}
      WHERE name = ${s.machine}`;
  }
  // Machine revision = team revision here: "as of rev" is every row loaded at or before it.
  for (const m of new Set(sessions.map((s) => s.machine))) {
    await sql`INSERT INTO intendant.batches (team_rev, machine, machine_rev)
              VALUES (${rev}, ${m}, ${rev}) ON CONFLICT DO NOTHING`;
  }
  await sql`UPDATE intendant.team_state SET revision = GREATEST(revision, ${rev})`;
}

/**
 * A session's records from its message texts: user and assistant in turn, one minute
 * apart, the last at `endMs`, each with an external-record locator.
 */
export function textRecords(
  s: { source: Source; id: string; texts: readonly string[]; endMs: number },
): MessageRecord[] {
  return s.texts.map((text, i) => ({
    id: `${s.id}-r${i}`,
    source: s.source,
    session_id: s.id,
    role: i % 2 === 0 ? "user" as const : "assistant" as const,
    ts_ms: s.endMs - (s.texts.length - 1 - i) * 60_000,
    text,
    truncated: false,
    locator: {
      v: 1 as const,
      kind: "external_record_id" as const,
      record_id: `${s.id}-r${i}`,
      file: "f.jsonl",
      hash: hash16Of(text),
    },
    order: i,
    generation: 0,
    subagent: false,
  }));
}
