/**
 * OpenCode discovery (formats-more §6.1): per data dir (`$XDG_DATA_HOME/opencode`, default
 * `~/.local/share/opencode`), the databases `opencode.db` and channel builds'
 * `opencode-<channel>.db`, plus databases named explicitly (`OPENCODE_DB` as an absolute
 * path; the caller resolves relative names against the data dir), and the legacy JSON
 * tree `storage/session/<projectID>/<sessionID>.json`. One unit per session id: the
 * database wins over the legacy tree (OpenCode imports the tree once and leaves it).
 * When several databases hold one session id (a copy such as `opencode-backup.db` beside
 * the live `opencode.db`), the live copy is chosen by content (issue 26 H1): the newest
 * `session.time_updated`, then the database written last (mtime), then `opencode.db`
 * before a channel database, then the name — never by file name alone, so a stale backup
 * that sorts first cannot shadow the database OpenCode writes.
 *
 * A database that cannot be listed this sweep (a writer kept it busy; empty, corrupt,
 * hostile or too large) reuses the session list it had last time in this process,
 * counted, so its sessions are not reported gone; with no list yet it is held
 * (Discovery.held: the sessions published from it are kept) and, unless merely busy,
 * named in a note. The other databases and the legacy tree are read as usual.
 */
import { basename, join } from "node:path";
import {
  countSkip,
  type Discovery,
  listDirBounded,
  listStoreSessions,
  type SessionUnit,
} from "../framework/plugin.ts";
import type { SnapshotOptions } from "../framework/sqlite_snapshot.ts";
import { listOpenCodeSessions } from "./opencode_db.ts";

/** Where OpenCode keeps its data. */
export interface OpenCodeRoots {
  /** Data dirs (each `<xdgData>/opencode`). */
  dataDirs: string[];
  /** Databases named explicitly (OPENCODE_DB), absolute. */
  dbFiles?: string[];
}

const DB_NAME = /^opencode(-[A-Za-z0-9._-]+)?\.db$/;
const SESSION_FILE = /^(ses_[A-Za-z0-9_-]+)\.json$/;

/** Discovery hint of a database unit. */
export interface DbHint {
  store: "db";
  db: string;
  /** The locator's file: the database name. */
  file: string;
}

/** Discovery hint of a legacy-tree unit. */
export interface LegacyHint {
  store: "legacy";
  dataDir: string;
}

async function dbsOf(roots: OpenCodeRoots, skipped: Record<string, number>): Promise<string[]> {
  const out: string[] = [];
  for (const dir of roots.dataDirs) {
    const entries = await listDirBounded(dir, { skipped });
    for (const e of entries ?? []) {
      if (!DB_NAME.test(e.name)) continue;
      if (!e.isFile) countSkip(skipped, "not_a_regular_file");
      else out.push(join(dir, e.name));
    }
  }
  for (const f of roots.dbFiles ?? []) if (!out.includes(f)) out.push(f);
  return out;
}

/** One database's copy of a session. */
interface Candidate {
  db: string;
  updated: number | null;
  mtimeMs: number;
}

/** Whether copy `a` of a session is the live one rather than `b` (see the header). */
export function livelier(a: Candidate, b: Candidate): boolean {
  const au = a.updated ?? -Infinity;
  const bu = b.updated ?? -Infinity;
  if (au !== bu) return au > bu;
  if (a.mtimeMs !== b.mtimeMs) return a.mtimeMs > b.mtimeMs;
  const canon = (p: string) => basename(p) === "opencode.db";
  if (canon(a.db) !== canon(b.db)) return canon(a.db);
  return a.db < b.db;
}

/** Units of every session OpenCode stores under `roots`. */
export async function discoverOpenCode(
  roots: OpenCodeRoots,
  o: { snapshot: SnapshotOptions; maxLegacySessions: number },
): Promise<Discovery> {
  const skipped: Record<string, number> = {};
  const held: string[] = [];
  const notes: string[] = [];
  const units: SessionUnit[] = [];
  const seen = new Set<string>();
  const add = (id: string, files: SessionUnit["files"], hint: DbHint | LegacyHint) => {
    if (seen.has(id)) return;
    seen.add(id);
    units.push({
      source: "opencode",
      sessionId: id,
      key: `opencode:${id}`,
      files,
      hint: { ...hint },
    });
  };
  // Every database's sessions first, then one owner per session id (the live copy).
  const owner = new Map<string, Candidate>();
  for (const db of await dbsOf(roots, skipped)) {
    const listed = await listStoreSessions(db, {
      label: "OpenCode",
      list: listOpenCodeSessions,
      snapshot: o.snapshot,
      skipped,
    });
    if (listed === null) continue;
    if (listed.held) held.push(db);
    if (listed.note) notes.push(listed.note);
    for (const s of listed.sessions) {
      const c: Candidate = { db, updated: s.updated, mtimeMs: listed.mtimeMs };
      const have = owner.get(s.id);
      if (have === undefined) owner.set(s.id, c);
      else {
        countSkip(skipped, "duplicate_session_in_another_db");
        if (livelier(c, have)) owner.set(s.id, c);
      }
    }
  }
  for (const [id, c] of owner) {
    const files = [{ path: c.db, role: "db" }, { path: `${c.db}-wal`, role: "wal" }];
    add(id, files, { store: "db", db: c.db, file: basename(c.db) });
  }
  let legacy = 0;
  for (const dir of roots.dataDirs) {
    const sessionRoot = join(dir, "storage", "session");
    for (const p of (await listDirBounded(sessionRoot, { skipped })) ?? []) {
      if (!p.isDirectory) continue;
      for (const f of (await listDirBounded(join(sessionRoot, p.name), { skipped })) ?? []) {
        const m = SESSION_FILE.exec(f.name);
        if (!m) continue;
        if (!f.isFile) {
          countSkip(skipped, "not_a_regular_file");
          continue;
        }
        if (seen.has(m[1]!)) continue;
        if (++legacy > o.maxLegacySessions) {
          countSkip(skipped, "walk_truncated");
          continue;
        }
        add(m[1]!, [{ path: join(sessionRoot, p.name, f.name), role: "session" }], {
          store: "legacy",
          dataDir: dir,
        });
      }
    }
  }
  return { units, skipped, held, notes };
}
