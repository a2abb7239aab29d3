/**
 * Goose discovery (formats-more §7.1): per data dir (`$XDG_DATA_HOME/goose`, default
 * `~/.local/share/goose`; `<GOOSE_PATH_ROOT>/data` when that is set — the caller resolves
 * both), the database `sessions/sessions.db` and the legacy `sessions/<name>.jsonl`
 * files. One unit per session id: the database wins (Goose imports every legacy file into
 * it when it creates the database, and leaves the files; the id is the file stem).
 * Backup databases (`goose db backup`, `pre_migration_*`) live elsewhere and duplicate
 * everything: never read. `hidden` sessions are never listed.
 * A database that cannot be listed this sweep reuses its last list in this process
 * (counted); with none it is held (Discovery.held: its published sessions are kept, not
 * reported gone) and, unless a writer merely kept it busy, named in a note; the legacy
 * files and the other data dirs are read as usual.
 */
import { join } from "node:path";
import {
  countSkip,
  type Discovery,
  listDirBounded,
  listStoreSessions,
  type SessionUnit,
} from "../framework/plugin.ts";
import type { SnapshotOptions } from "../framework/sqlite_snapshot.ts";
import { listGooseSessions } from "./goose_db.ts";

/** Where Goose keeps its data. */
export interface GooseRoots {
  /** Data dirs (each holding `sessions/`). */
  dataDirs: string[];
}

/** Discovery hint: which store a unit is read from, and the locator's file. */
export interface GooseHint {
  store: "db" | "legacy";
  /** The store's path relative to the data dir. */
  file: string;
}

const LEGACY = /^(.+)\.jsonl$/;

/** Units of every Goose session under `roots`. */
export async function discoverGoose(
  roots: GooseRoots,
  o: { snapshot: SnapshotOptions; maxLegacySessions: number },
): Promise<Discovery> {
  const skipped: Record<string, number> = {};
  const held: string[] = [];
  const notes: string[] = [];
  const units: SessionUnit[] = [];
  const seen = new Set<string>();
  const add = (id: string, files: SessionUnit["files"], hint: GooseHint) => {
    if (seen.has(id)) return;
    seen.add(id);
    units.push({ source: "goose", sessionId: id, key: `goose:${id}`, files, hint: { ...hint } });
  };
  for (const dir of roots.dataDirs) {
    const db = join(dir, "sessions", "sessions.db");
    const listed = await listStoreSessions(db, {
      label: "Goose",
      list: listGooseSessions,
      snapshot: o.snapshot,
      skipped,
    });
    if (listed === null) continue;
    if (listed.held) held.push(db);
    if (listed.note) notes.push(listed.note);
    const files = [{ path: db, role: "db" }, { path: `${db}-wal`, role: "wal" }];
    for (const s of listed.sessions) {
      add(s.id, files, { store: "db", file: "sessions/sessions.db" });
    }
  }
  let legacy = 0;
  for (const dir of roots.dataDirs) {
    const sdir = join(dir, "sessions");
    for (const e of (await listDirBounded(sdir, { skipped })) ?? []) {
      const m = LEGACY.exec(e.name);
      if (!m) continue;
      if (!e.isFile) {
        countSkip(skipped, "not_a_regular_file");
        continue;
      }
      if (seen.has(m[1]!)) continue;
      if (++legacy > o.maxLegacySessions) {
        countSkip(skipped, "walk_truncated");
        continue;
      }
      add(m[1]!, [{ path: join(sdir, e.name), role: "session" }], {
        store: "legacy",
        file: `sessions/${e.name}`,
      });
    }
  }
  return { units, skipped, held, notes };
}
