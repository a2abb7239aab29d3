/**
 * What Deep Search scans, in order: one unit per session, across every source.
 *  - native: an Intendant session directory under logsDir (deep_files.ts names its files);
 *  - file: an external session the index names (manifest entry, files still there): the
 *    agent's own transcript files, `meta.files`, in path order;
 *  - vault: a session whose files are gone (the index says source_gone, or the vault's
 *    catalog has every file gone): the last kept version of each file, in path order.
 * A vault catalog the index does not hold (pruned from the window, never indexed) is a
 * unit too: its copies when gone, its live files otherwise.
 * Order: newest created first (native meta created_at_ms; external the shard's oldest
 * message; a vault-only session its first keep), then key. A session's created time does
 * not change while a client pages, so the order is stable and a cursor resumes in it.
 * Database sources (OpenCode, Goose) keep their tool output in SQLite rows, not in
 * transcript files: a session the vault keeps an export of is scanned in that export
 * (its rows as JSON, `vault`), the others are counted as not scanned, with the reason.
 * A damaged vault catalog is left out (Vault.list names it apart); a gone session the
 * vault holds no copy of is counted in `gone_unkept`.
 */
import type { Source } from "../message_search/mod.ts";
import { type Catalog, latest, sessionGone, type Vault, type Version } from "../vault/mod.ts";
import type { DeepWhere } from "./deep_cursor.ts";
import { discoverNative } from "./native_facts.ts";
import type { CatalogDeps } from "./types.ts";

/** Sources whose sessions live in a database: not scanned (see the header). */
export const DEEP_DATABASE_SOURCES: ReadonlySet<Source> = new Set(["opencode", "goose"]);

/** Why a database source is not scanned, as the answer says it. */
export const DATABASE_REASON = "its tool calls and output are SQLite rows, not transcript " +
  "files, and the vault keeps no export of these sessions (message search covers their prose)";

/** One session to scan. */
export interface DeepUnit {
  /** Created ms: the order key (-1 when unknown). */
  c: number;
  key: string;
  source: Source;
  sessionId: string;
  where: DeepWhere;
  /** native: the session directory. */
  dir?: string;
  /** file / vault: the paths, in scan order. */
  files?: string[];
  /** vault: each path's last kept version. */
  versions?: Map<string, Version>;
}

/** The scan plan of one request. */
export interface DeepPlan {
  units: DeepUnit[];
  notScanned: { source: Source; sessions: number; reason: string }[];
  /** Gone sessions the vault holds no copy of. */
  goneUnkept: number;
}

/** Scan order: negative when `a` comes first. */
export function compareUnits(a: { c: number; key: string }, b: { c: number; key: string }) {
  return b.c - a.c || (a.key < b.key ? -1 : a.key > b.key ? 1 : 0);
}

const byPath = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

function vaultUnit(c: number, cat: Catalog): DeepUnit {
  const versions = new Map(cat.files.map((f) => [f.path, latest(f)]));
  return {
    c,
    key: cat.key,
    source: cat.source as Source,
    sessionId: cat.session_id,
    where: "vault",
    files: [...versions.keys()].sort(byPath),
    versions,
  };
}

/** Lists every unit of `d` (and of `vault`, when given), in scan order. */
export async function planDeepScan(d: CatalogDeps, vault: Vault | null): Promise<DeepPlan> {
  const units: DeepUnit[] = [];
  for (const f of await discoverNative(d.logsDir)) {
    const c = f.meta?.created_at_ms ?? -1;
    units.push({
      c,
      key: `intendant:${f.id}`,
      source: "intendant",
      sessionId: f.id,
      where: "native",
      dir: f.dir,
    });
  }
  const catalogs = new Map<string, Catalog>();
  for (const cat of vault ? (await vault.list()).catalogs : []) {
    if (cat.source !== "intendant") catalogs.set(cat.key, cat);
  }
  const db = new Map<Source, number>();
  let goneUnkept = 0;
  const manifest = await d.store.readManifest();
  for (const [key, e] of Object.entries(manifest.sessions)) {
    // Native sessions are scanned from logsDir above, whole (the index reads only prose).
    if (e.source === "intendant") continue;
    const c = e.oldest_ts_ms > 0 ? e.oldest_ts_ms : -1;
    const cat = catalogs.get(key);
    catalogs.delete(key);
    if (DEEP_DATABASE_SOURCES.has(e.source)) {
      if (cat) units.push(vaultUnit(c, cat));
      else db.set(e.source, (db.get(e.source) ?? 0) + 1);
      continue;
    }
    if (!e.source_gone && !(cat && sessionGone(cat))) {
      units.push({
        c,
        key,
        source: e.source,
        sessionId: e.session_id,
        where: "file",
        files: [...e.meta.files].sort(byPath),
      });
    } else if (cat) units.push(vaultUnit(c, cat));
    else goneUnkept++;
  }
  // Kept sessions the index does not hold.
  for (const cat of catalogs.values()) {
    const c = cat.first_kept_ms;
    // A database source's kept export exists only in the vault.
    if (sessionGone(cat) || DEEP_DATABASE_SOURCES.has(cat.source as Source)) {
      units.push(vaultUnit(c, cat));
    } else {
      const files = cat.files.filter((f) => f.gone_ms === null).map((f) => f.path).sort(byPath);
      const source = cat.source as Source;
      units.push({ c, key: cat.key, source, sessionId: cat.session_id, where: "file", files });
    }
  }
  units.sort(compareUnits);
  const notScanned = [...db].map(([source, sessions]) => ({
    source,
    sessions,
    reason: DATABASE_REASON,
  }));
  return { units, notScanned, goneUnkept };
}
