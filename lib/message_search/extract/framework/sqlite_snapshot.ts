/**
 * Reading an agent's live SQLite store (OpenCode `opencode.db`, Goose `sessions.db`)
 * safely, with Deno's built-in `node:sqlite` (no FFI): a private, consistent snapshot.
 *
 * Why a copy: a read-only connection to a WAL database needs the `-shm` index (SQLite
 * creates or maps it next to the database), and we must never write into the agent's
 * directory nor create a missing database there. So the database and its `-wal` (never
 * the `-shm`, which is rebuilt from the WAL) are copied through the one contained reader
 * (durable/contained_open.ts: lstat, O_NOFOLLOW, fstat identity, size cap) into a fresh
 * private directory under the caller's `tempDir` (inside the state root), the copy's WAL
 * is folded into it (journal_mode=DELETE on the copy), the copy is reopened read-only and
 * its files are unlinked at once: the open connection keeps reading the unlinked inode,
 * so nothing lingers on disk even if the process dies (POSIX semantics; Linux and macOS).
 *
 * Invariants:
 * - Nothing is ever opened, created or written in the agent's directory except through
 *   read-only contained opens of exactly `<db>` and `<db>-wal` (and an lstat of
 *   `<db>-journal`).
 * - A snapshot is consistent or refused: both files are stat'ed before and after the copy
 *   and must be identical (size, mtime, inode); a rollback-journal database with a
 *   `-journal` beside it is being written (or needs a hot-journal rollback we may not do).
 *   Either case is retried `retries` times, then fails as `db_busy`; the caller keeps its
 *   cursor so the next sweep retries. A torn WAL tail is harmless: SQLite's recovery
 *   ignores frames after the last valid commit frame (checksums + salts).
 * - Bounded: the database plus WAL over `maxBytes` is refused (`db_too_large`) before any
 *   byte is copied; a file that grows past the cap mid-copy is refused too.
 * - Bounded in time (issue 26 H1): the database is the agent's, so it may be hostile — a
 *   `session` table that is a view over `WITH RECURSIVE c(n) AS (… UNION ALL …)` runs
 *   forever, synchronously, on the thread that asked (node:sqlite has no progress handler
 *   and no interrupt). So every connection carries an authorizer that refuses, at
 *   prepare time, recursive CTEs, any read through a view or a CTE (every SELECT/READ
 *   SQLite attributes to one; our own statements use neither) and ATTACH; and {@link SqliteSnapshot.refusal} lets a
 *   source refuse, before its first query, a table it reads that is not a plain table (a
 *   view, a virtual table) or that has generated columns (their expressions run on every
 *   read). What is left — our own fixed statements on plain tables, no joins, LIMITs —
 *   costs time linear in the copy, which the size cap bounds. A refused database is
 *   skipped and named (`db_hostile`), never retried into a hang.
 * - An empty file (what `sqlite3 new.db` leaves, or a writer for an instant at creation)
 *   is retried like a busy store, then reported `db_empty`: skipped, never "busy" for good.
 * Errors: every failure is a typed {@link SnapshotFailure} value, never a throw, except
 * programming errors (bad options → RangeError) and a state directory we cannot create.
 */
import { constants, DatabaseSync, type SQLInputValue } from "node:sqlite";
import { join } from "node:path";
import { createNewFileSync, ensurePrivateDirSync, openContained } from "../../../durable/mod.ts";
import { noteSourceOpen } from "../../io_stats.ts";

/** Default cap on database + WAL bytes copied per snapshot. */
export const SQLITE_SNAPSHOT_MAX_BYTES = 512 * 1024 * 1024;
/** Default attempts after the first when the store moves under the copy. */
export const SQLITE_SNAPSHOT_RETRIES = 3;
/** Default pause between attempts. */
export const SQLITE_SNAPSHOT_RETRY_MS = 40;
const COPY_CHUNK_BYTES = 1 << 20;
const SQLITE_MAGIC = "SQLite format 3\0";

/** Why a snapshot (or a query on one) failed; each is a `skipped` reason as is. */
export type SnapshotFailure =
  /** The database file is not there (or a parent is not a directory). */
  | "db_missing"
  /** A symlink, FIFO, device, or swapped file: refused by the contained reader. */
  | "db_refused"
  /** Database + WAL larger than the cap. */
  | "db_too_large"
  /** The first 16 bytes are not the SQLite magic. */
  | "db_not_sqlite"
  /** A 0-byte file through every attempt. */
  | "db_empty"
  /** A writer was active during every attempt (journal present, or files moved). */
  | "db_busy"
  /** SQLite reported the copy malformed / not a database. */
  | "db_corrupt"
  /** Permission denied reading the store. */
  | "db_unreadable";

/** Identity + size + mtime of one file, as a sweep compares them. */
export interface FileSig {
  dev: number;
  ino: number;
  size: number;
  mtime_ms: number;
}

/** The stat signature of a store: equal signatures mean "unchanged" without opening it. */
export interface StoreSig {
  db: FileSig;
  wal: FileSig | null;
  /** Whether a rollback `-journal` file exists beside the database. */
  journal: boolean;
}

/** One consistent, private, read-only view of the store. */
export interface SqliteSnapshot {
  readonly db: DatabaseSync;
  /** The store's signature the copy was taken at. */
  readonly sig: StoreSig;
  /** Column names of `table` (empty when the table does not exist). */
  columns(table: string): Set<string>;
  /**
   * Why the store's `tables` must not be queried: `db_hostile` when one of them is a view,
   * a virtual table or has generated columns (see the header); null when each is a plain
   * table or absent (absence is the source's schema check).
   */
  refusal(tables: readonly string[]): "db_hostile" | null;
  /** Runs a read query; a SQLite error comes back as a failure reason, never a throw. */
  all(sql: string, ...params: SQLInputValue[]): QueryResult;
  close(): void;
}

/**
 * A query's rows or why it failed (`db_schema`: a table/column this version lacks;
 * `db_hostile`: the authorizer refused it).
 */
export type QueryResult =
  | { ok: true; rows: Record<string, unknown>[] }
  | { ok: false; reason: "db_corrupt" | "db_busy" | "db_schema" | "db_error" | "db_hostile" };

/** Options of {@link openSqliteSnapshot}. */
export interface SnapshotOptions {
  /** A directory inside the state root for the private copies (created 0700). */
  tempDir: string;
  /** @default SQLITE_SNAPSHOT_MAX_BYTES */
  maxBytes?: number;
  /** @default SQLITE_SNAPSHOT_RETRIES */
  retries?: number;
  /** @default SQLITE_SNAPSHOT_RETRY_MS */
  retryDelayMs?: number;
}

/** Outcome of {@link openSqliteSnapshot}. */
export type SnapshotOpen =
  | { ok: true; snapshot: SqliteSnapshot }
  | { ok: false; reason: SnapshotFailure };

function fileSig(path: string): FileSig | null | "other" {
  let st: Deno.FileInfo;
  try {
    st = Deno.lstatSync(path);
  } catch (err) {
    if (err instanceof Deno.errors.NotFound || err instanceof Deno.errors.NotADirectory) {
      return null;
    }
    throw err;
  }
  if (!st.isFile) return "other";
  return { dev: st.dev, ino: st.ino ?? 0, size: st.size, mtime_ms: st.mtime?.getTime() ?? 0 };
}

/**
 * The store's stat signature (lstat only: never opens). null when the database is
 * missing; "refused" when it (or its WAL) is not a regular file.
 */
export function statSqliteStore(dbPath: string): StoreSig | null | "refused" {
  const db = fileSig(dbPath);
  if (db === null) return null;
  const wal = fileSig(`${dbPath}-wal`);
  const journal = fileSig(`${dbPath}-journal`);
  if (db === "other" || wal === "other") return "refused";
  return { db, wal, journal: journal !== null && journal !== "other" && journal.size > 0 };
}

function sameFile(a: FileSig | null, b: FileSig | null): boolean {
  if (a === null || b === null) return a === b;
  return a.dev === b.dev && a.ino === b.ino && a.size === b.size && a.mtime_ms === b.mtime_ms;
}

/** Whether two signatures describe the same bytes (by identity, size and mtime). */
export function sameStoreSig(a: StoreSig | null, b: StoreSig | null): boolean {
  if (a === null || b === null) return false;
  return sameFile(a.db, b.db) && sameFile(a.wal, b.wal) && a.journal === b.journal;
}

/** Copies `src` (contained, capped) into a new file `dest`; a refusal comes back as a reason. */
async function copyContained(
  src: string,
  dest: { dir: string; name: string },
  cap: number,
): Promise<{ ok: true; bytes: number; head: Uint8Array } | { ok: false; reason: SnapshotFailure }> {
  let opened;
  try {
    opened = await openContained(src, { hardlinks: "allow", maxSize: cap });
  } catch (err) {
    if (err instanceof Deno.errors.PermissionDenied) return { ok: false, reason: "db_unreadable" };
    throw err;
  }
  if (!opened.ok) {
    const r = opened.reason;
    return {
      ok: false,
      reason: r === "missing" ? "db_missing" : r === "too_large" ? "db_too_large" : "db_refused",
    };
  }
  noteSourceOpen();
  const file = opened.file;
  // O_EXCL in a fresh private directory of ours: nothing planted can be written through.
  const out = createNewFileSync(dest.dir, dest.name, { root: dest.dir });
  let head = new Uint8Array(0);
  let off = 0;
  try {
    // Read to EOF (not to the fstat size): a file that grew is seen, and capped.
    for (;;) {
      const chunk = await file.read(off, COPY_CHUNK_BYTES);
      if (chunk.length === 0) break;
      if (off === 0) head = chunk.slice(0, 100);
      off += chunk.length;
      if (off > cap) return { ok: false, reason: "db_too_large" };
      let w = 0;
      while (w < chunk.length) w += out.writeSync(chunk.subarray(w));
    }
  } finally {
    out.close();
    await file.close();
  }
  return { ok: true, bytes: off, head };
}

/** Classifies a SQLite error by its message (node:sqlite gives no numeric code here). */
export function classifySqliteError(
  err: unknown,
): "db_corrupt" | "db_busy" | "db_schema" | "db_error" | "db_hostile" {
  const msg = err instanceof Error ? err.message.toLowerCase() : String(err).toLowerCase();
  // The authorizer's refusals: "not authorized", "access to t.c is prohibited".
  if (msg.includes("not authorized") || msg.includes("is prohibited")) return "db_hostile";
  if (msg.includes("locked") || msg.includes("busy")) return "db_busy";
  if (msg.includes("malformed") || msg.includes("not a database") || msg.includes("corrupt")) {
    return "db_corrupt";
  }
  if (msg.includes("no such table") || msg.includes("no such column")) return "db_schema";
  return "db_error";
}

function removeDir(dir: string): void {
  try {
    Deno.removeSync(dir, { recursive: true });
  } catch (err) {
    if (!(err instanceof Deno.errors.NotFound)) throw err;
  }
}

/**
 * Takes a consistent private snapshot of the store at `dbPath` (see the header). The
 * caller must {@link SqliteSnapshot.close} it; its files are already gone from disk.
 */
export async function openSqliteSnapshot(
  dbPath: string,
  options: SnapshotOptions,
): Promise<SnapshotOpen> {
  const {
    tempDir,
    maxBytes = SQLITE_SNAPSHOT_MAX_BYTES,
    retries = SQLITE_SNAPSHOT_RETRIES,
    retryDelayMs = SQLITE_SNAPSHOT_RETRY_MS,
  } = options;
  if (!(maxBytes > 0)) throw new RangeError(`Option "maxBytes" must be positive: got ${maxBytes}`);
  if (!(retries >= 0)) throw new RangeError(`Option "retries" must be >= 0: got ${retries}`);
  ensurePrivateDirSync(tempDir);
  for (let attempt = 0;; attempt++) {
    const r = await attemptSnapshot(dbPath, tempDir, maxBytes);
    const transient = !r.ok && (r.reason === "db_busy" || r.reason === "db_empty");
    if (!transient || attempt >= retries) return r;
    await new Promise((res) => setTimeout(res, retryDelayMs * (attempt + 1)));
  }
}

async function attemptSnapshot(
  dbPath: string,
  tempDir: string,
  maxBytes: number,
): Promise<SnapshotOpen> {
  let before: StoreSig | null | "refused";
  try {
    before = statSqliteStore(dbPath);
  } catch (err) {
    if (isPermission(err)) return { ok: false, reason: "db_unreadable" };
    throw err;
  }
  if (before === null) return { ok: false, reason: "db_missing" };
  if (before === "refused") return { ok: false, reason: "db_refused" };
  if (before.db.size + (before.wal?.size ?? 0) > maxBytes) {
    return { ok: false, reason: "db_too_large" };
  }
  // A rollback-journal store with a -journal beside it is mid-write (or needs a hot
  // journal rolled back, which only a writer may do): its bytes are not a committed state.
  if (before.journal) return { ok: false, reason: "db_busy" };
  const dir = Deno.makeTempDirSync({ dir: tempDir, prefix: "snap-" });
  const copy = join(dir, "store.db");
  try {
    const main = await copyContained(dbPath, { dir, name: "store.db" }, maxBytes);
    if (!main.ok) return main;
    if (new TextDecoder("latin1").decode(main.head.subarray(0, 16)) !== SQLITE_MAGIC) {
      // An empty file is what a writer leaves for an instant at creation: retried, and
      // named as empty (not busy: busy holds a source) when it stays so.
      return {
        ok: false,
        reason: main.bytes === 0 ? (before.wal === null ? "db_empty" : "db_busy") : "db_not_sqlite",
      };
    }
    if (before.wal !== null) {
      const wal = await copyContained(
        `${dbPath}-wal`,
        { dir, name: "store.db-wal" },
        maxBytes - main.bytes,
      );
      // The WAL vanishing mid-copy means a checkpoint ran: the db copy may predate it.
      if (!wal.ok) {
        return { ok: false, reason: wal.reason === "db_missing" ? "db_busy" : wal.reason };
      }
    }
    const after = statSqliteStore(dbPath);
    if (after === null || after === "refused" || !sameStoreSig(before, after)) {
      return { ok: false, reason: "db_busy" };
    }
    return openCopy(copy, before);
  } finally {
    // Unlinked whether or not the snapshot opened: an open connection keeps its inode.
    removeDir(dir);
  }
}

function openCopy(copy: string, sig: StoreSig): SnapshotOpen {
  let db: DatabaseSync | null = null;
  try {
    // Fold the copied WAL into the copy so it is one self-contained file, then read-only.
    const rw = new DatabaseSync(copy);
    try {
      rw.exec("PRAGMA journal_mode=DELETE");
    } finally {
      rw.close();
    }
    db = new DatabaseSync(copy, { readOnly: true });
    guardConnection(db);
    db.prepare("SELECT count(*) FROM sqlite_master").get();
  } catch (err) {
    db?.close();
    const c = classifySqliteError(err);
    return { ok: false, reason: c === "db_busy" ? "db_busy" : "db_corrupt" };
  }
  return { ok: true, snapshot: snapshotOf(db, sig) };
}

/**
 * The authorizer every connection to an agent's store carries (see the header): no
 * recursive CTE, nothing read through a view or trigger, no ATTACH. Refusals surface as
 * "not authorized" (classified `db_hostile`).
 */
export function guardConnection(db: DatabaseSync): void {
  db.setAuthorizer((action, _a1, _a2, _dbName, viewOrTrigger) => {
    if (action === constants.SQLITE_RECURSIVE || action === constants.SQLITE_ATTACH) {
      return constants.SQLITE_DENY;
    }
    if (
      (action === constants.SQLITE_SELECT || action === constants.SQLITE_READ) &&
      viewOrTrigger !== null
    ) {
      return constants.SQLITE_DENY;
    }
    return constants.SQLITE_OK;
  });
}

function snapshotOf(db: DatabaseSync, sig: StoreSig): SqliteSnapshot {
  const cols = new Map<string, Set<string>>();
  const refusals = new Map<string, "db_hostile" | null>();
  let closed = false;
  const all = (sql: string, ...params: SQLInputValue[]): QueryResult => {
    try {
      return { ok: true, rows: db.prepare(sql).all(...params) as Record<string, unknown>[] };
    } catch (err) {
      return { ok: false, reason: classifySqliteError(err) };
    }
  };
  return {
    db,
    sig,
    columns(table: string): Set<string> {
      let c = cols.get(table);
      if (c === undefined) {
        const r = all("SELECT name FROM pragma_table_info(?)", table);
        c = new Set(r.ok ? r.rows.map((row) => String(row.name)) : []);
        cols.set(table, c);
      }
      return c;
    },
    all,
    refusal(tables: readonly string[]): "db_hostile" | null {
      for (const t of tables) {
        let r = refusals.get(t);
        if (r === undefined) {
          r = tableRefusal(all, t);
          refusals.set(t, r);
        }
        if (r) return r;
      }
      return null;
    },
    close(): void {
      if (closed) return;
      closed = true;
      db.close();
    },
  };
}

/** `db_hostile` unless `table` is a plain table without generated columns, or absent. */
function tableRefusal(
  all: (sql: string, ...params: SQLInputValue[]) => QueryResult,
  table: string,
): "db_hostile" | null {
  const m = all("SELECT type, sql FROM sqlite_master WHERE name = ? COLLATE NOCASE", table);
  if (!m.ok) return "db_hostile";
  for (const row of m.rows) {
    if (row.type === "index" || row.type === "trigger") continue;
    if (row.type !== "table") return "db_hostile";
    if (typeof row.sql === "string" && /^\s*CREATE\s+VIRTUAL\b/i.test(row.sql)) return "db_hostile";
  }
  // hidden: 1 a virtual table's hidden column, 2 and 3 generated (VIRTUAL, STORED).
  const x = all("SELECT count(*) AS n FROM pragma_table_xinfo(?) WHERE hidden != 0", table);
  if (!x.ok || Number(x.rows[0]?.n ?? 0) > 0) return "db_hostile";
  return null;
}

function isPermission(err: unknown): boolean {
  const code = err instanceof Error && "code" in err ? err.code : undefined;
  return code === "EACCES" || code === "EPERM" || err instanceof Deno.errors.PermissionDenied;
}

/** Snapshots kept open per process (the oldest is closed past this many stores). */
const SHARED_SNAPSHOTS_MAX = 4;
const SHARED = new Map<string, SqliteSnapshot>();

/**
 * The process-wide snapshot of the store at `dbPath` for signature `sig`: reused while the
 * store's signature is unchanged (one copy serves discovery and every session of a sweep),
 * replaced (the old one closed) when it moved. The wiring rebuilds extractors every sweep,
 * so the cache cannot live in an extractor instance.
 */
export async function sharedSnapshot(
  dbPath: string,
  sig: StoreSig,
  options: SnapshotOptions,
): Promise<SnapshotOpen> {
  const have = SHARED.get(dbPath);
  if (have && sameStoreSig(have.sig, sig)) return { ok: true, snapshot: have };
  const r = await openSqliteSnapshot(dbPath, options);
  if (!r.ok) return r;
  if (have) have.close();
  SHARED.delete(dbPath);
  SHARED.set(dbPath, r.snapshot);
  while (SHARED.size > SHARED_SNAPSHOTS_MAX) {
    const [oldest, snap] = SHARED.entries().next().value!;
    snap.close();
    SHARED.delete(oldest);
  }
  return r;
}

/** Closes every shared snapshot (tests; a process about to exit). */
export function closeSharedSnapshots(): void {
  for (const s of SHARED.values()) s.close();
  SHARED.clear();
}
