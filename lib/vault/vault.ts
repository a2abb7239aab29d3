/**
 * The vault: a compressed, content-addressed copy of every external transcript the index
 * sees, kept after its agent deletes it (issue 29). One Vault per state root; the
 * indexer's sweeps feed it the units they list (Keeper, keeper.ts), so a session is kept
 * on first sight — older than the index window too — and on every change after that
 * (keep.ts: a tail for an append, a new version for a rewrite).
 *
 * Invariants:
 *  - one writer: the vault is written only by the process holding the index's writer
 *    lock (the daemon, `intendant index`), one keep at a time (Keeper serializes);
 *  - a catalog names only objects written before it (objects.ts, layout.ts), and is
 *    replaced whole: a kill at any point leaves the old catalog or the new one, plus at
 *    most some objects no catalog names (removed by collect());
 *  - nothing kept is removed by a keep: a rewrite adds a version, a missing file is
 *    marked gone. A damaged catalog is moved aside (`<name>.damaged-<ms>`), never
 *    overwritten, and its session starts a new catalog;
 *  - every source file is read through the contained reader (hard links allowed, as for
 *    every external transcript: their twins are real), never following a symlink;
 *  - a file whose bytes are produced (KeepUnit `produce`: a database session's row
 *    export, db_export.ts) goes through the same rules as a file on disk: its producer's
 *    stamp plays the mtime, its bytes the file's; "missing" marks it gone. It has no
 *    place on disk to look at, so when a sweep no longer lists it (the store no longer
 *    lists the session) it is gone.
 */
import { join } from "node:path";
import {
  type Fs,
  openContained,
  realFs,
  removeOrphanTemps,
  statOrNull,
  writeFileAtomic,
} from "../durable/mod.ts";
import { AmbiguousPrefixError, NotFoundError } from "../errors.ts";
import {
  type Catalog,
  type Chunk,
  type KeptFile,
  latest,
  newCatalog,
  parseCatalog,
  type Version,
} from "./catalog.ts";
import { keepFile, type SourceFile } from "./keep.ts";
import { applyPlan, planPrune } from "./budget.ts";
import {
  BUDGET_FILE,
  CATALOG_MAX_BYTES,
  catalogPath,
  CHUNK_MAX_BYTES,
  FILE_MODE,
  objectPath,
  OBJECTS_DIR,
  REPACK_AFTER_CHUNKS,
  SESSIONS_DIR,
} from "./layout.ts";
import { ObjectStore } from "./objects.ts";
import { EXPORT_ROLE } from "./db_export.ts";

/**
 * Where a kept file's bytes come from when they are not a file at its path (a database
 * session's row export): a cheap stamp, and the bytes with the stamp they were read at.
 */
export interface FileProducer {
  /** The change time (ms) of what the bytes come from; null: it is gone. A stat, no read. */
  stampMs(): number | null | "refused";
  /** The bytes; `reason` "missing" when what they come from is gone. */
  produce(): Promise<
    { ok: true; bytes: Uint8Array; stampMs: number } | { ok: false; reason: string }
  >;
}

/** One file of a unit: a path on disk, or (with `produce`) bytes a producer makes. */
export interface KeepFileInput {
  path: string;
  role: string;
  produce?: FileProducer;
}

/** One session as a sweep listed it: what the vault keeps. */
export interface KeepUnit {
  key: string;
  source: string;
  sessionId: string;
  files: readonly KeepFileInput[];
}

/** An opened unit file (the contained reader's handle, or a producer's bytes). */
type Opened =
  | { ok: true; file: SourceFile; close(): Promise<void> }
  | { ok: false; reason: string };

const NOTHING_TO_CLOSE = () => Promise.resolve();

/** A producer's bytes as a file; an unchanged stamp is the last version, unread. */
async function openProduced(p: FileProducer, last: Version | null): Promise<Opened> {
  const stamp = p.stampMs();
  if (stamp === null) return { ok: false, reason: "missing" };
  if (stamp === "refused") return { ok: false, reason: "db_refused" };
  if (last && stamp === last.mtime_ms) {
    // keepFile answers "same" on an equal size and mtime before it reads a byte.
    const read = () => Promise.reject(new Error("An unchanged export is never read"));
    return { ok: true, file: { size: last.size, mtimeMs: stamp, read }, close: NOTHING_TO_CLOSE };
  }
  const r = await p.produce();
  if (!r.ok) return r;
  const b = r.bytes;
  const read = (o: number, n: number) => Promise.resolve(b.subarray(o, o + n));
  return { ok: true, file: { size: b.length, mtimeMs: r.stampMs, read }, close: NOTHING_TO_CLOSE };
}

/** What one keep() did. */
export interface KeepReport {
  sessions: number;
  /** Files kept for the first time, appended to, rewritten (a new version), unchanged. */
  new: number;
  appended: number;
  rewritten: number;
  same: number;
  /** Files found missing from their place this keep (marked gone). */
  gone: number;
  /** Compressed bytes written (new objects only). */
  bytesWritten: number;
  /** One line per file or catalog that could not be kept (the rest still were). */
  errors: string[];
}

/**
 * What the disk budget has taken (`<vault>/budget.json`, replaced whole): the totals
 * since the vault began, and the last pruning.
 */
export interface BudgetRecord {
  v: 1;
  max_bytes: number;
  /** When the budget last bit, and the object bytes before and after. */
  last_ms: number;
  last_before: number;
  last_after: number;
  /** Still over with only current copies left (nothing more may go). */
  over: boolean;
  /** Totals over every pruning. */
  versions: number;
  gone_files: number;
  sessions: number;
  bytes_freed: number;
}

/** What one prune() did (null fields: the budget did not bite). */
export interface PruneReport {
  before: number;
  after: number;
  versions: number;
  gone_files: number;
  /** Catalogs emptied (every version of every file pruned), removed. */
  sessions: number;
  over: boolean;
  /** Why nothing was pruned although over (a damaged catalog hides what it names). */
  refused: string | null;
}

/** Options for {@link Vault}. */
export interface VaultOptions {
  /** The vault directory (`<state-root>/vault`: ResolvedConfig.vault.dir). */
  dir: string;
  fs?: Fs;
  now?: () => number;
}

/** A listed catalog, or why one could not be read. */
export interface CatalogList {
  catalogs: Catalog[];
  /** Catalog files that failed their checks (left in place, named). */
  damaged: string[];
}

/** See the module header. */
export class Vault {
  readonly dir: string;
  readonly #fs: Fs;
  readonly #now: () => number;
  readonly objects: ObjectStore;

  constructor(o: VaultOptions) {
    this.dir = o.dir;
    this.#fs = o.fs ?? realFs;
    this.#now = o.now ?? Date.now;
    this.objects = new ObjectStore({ fs: this.#fs, vault: this.dir });
  }

  /**
   * Keeps every unit (see the header); one unit's failure never stops the others.
   * `stop` is asked between units (a daemon shutting down): the rest wait for the next
   * keep, and nothing half-kept is left (each unit is kept whole or not at all).
   */
  async keep(units: readonly KeepUnit[], o: { stop?: () => boolean } = {}): Promise<KeepReport> {
    const r: KeepReport = {
      sessions: 0,
      new: 0,
      appended: 0,
      rewritten: 0,
      same: 0,
      gone: 0,
      bytesWritten: 0,
      errors: [],
    };
    const before = this.objects.written;
    for (const u of units) {
      if (o.stop?.()) break;
      try {
        await this.#keepUnit(u, r);
        r.sessions++;
      } catch (err) {
        r.errors.push(`${u.key}: ${err instanceof Error ? err.message : String(err)}`);
      }
    }
    r.bytesWritten = this.objects.written - before;
    return r;
  }

  /** Marks every file of the sessions `keys` gone (their agent deleted them). */
  async markGone(keys: readonly string[]): Promise<number> {
    let marked = 0;
    for (const key of keys) {
      const c = await this.read(key);
      if (!c) continue;
      const now = this.#now();
      let changed = false;
      for (const f of c.files) {
        if (f.gone_ms === null && !(await this.#present(f))) {
          f.gone_ms = now;
          changed = true;
        }
      }
      if (changed) {
        await this.#write(c);
        marked++;
      }
    }
    return marked;
  }

  /** The catalog of session `key`, or null when the vault holds none. */
  async read(key: string): Promise<Catalog | null> {
    const path = catalogPath(this.dir, key);
    let text: string;
    try {
      text = new TextDecoder().decode(
        (await this.#fs.readFileCapped(path, CATALOG_MAX_BYTES)).bytes,
      );
    } catch (err) {
      if (err instanceof Deno.errors.NotFound) return null;
      throw err;
    }
    const c = parseCatalog(text);
    if (c.key !== key) throw new TypeError(`Damaged vault catalog: it names "${c.key}"`);
    return c;
  }

  /** Every catalog in the vault (damaged ones named apart). */
  async list(): Promise<CatalogList> {
    const dir = join(this.dir, SESSIONS_DIR);
    const out: CatalogList = { catalogs: [], damaged: [] };
    let names: string[];
    try {
      names = (await this.#fs.readDir(dir)).filter((e) => e.isFile && e.name.endsWith(".json"))
        .map((e) => e.name).sort();
    } catch (err) {
      if (err instanceof Deno.errors.NotFound) return out;
      throw err;
    }
    for (const name of names) {
      try {
        const { bytes } = await this.#fs.readFileCapped(join(dir, name), CATALOG_MAX_BYTES);
        out.catalogs.push(parseCatalog(new TextDecoder().decode(bytes)));
      } catch (err) {
        if (err instanceof Deno.errors.NotFound) continue; // replaced while listed
        out.damaged.push(`${join(dir, name)}: ${err instanceof Error ? err.message : err}`);
      }
    }
    return out;
  }

  /**
   * The one session `query` names: a session key (`claude-code:…`), a session id, or a
   * unique prefix of either. NotFoundError / AmbiguousPrefixError otherwise.
   */
  async find(query: string): Promise<Catalog> {
    const { catalogs } = await this.list();
    const exact = catalogs.filter((c) => c.key === query || c.session_id === query);
    if (exact.length === 1) return exact[0]!;
    const hits = exact.length > 1
      ? exact
      : catalogs.filter((c) => c.key.startsWith(query) || c.session_id.startsWith(query));
    if (hits.length === 1) return hits[0]!;
    if (hits.length === 0) {
      throw new NotFoundError(`No session in the vault matches "${query}"`);
    }
    throw new AmbiguousPrefixError(query, hits.map((c) => c.key));
  }

  /** The bytes of `v`, chunk by chunk, each verified against its name. */
  async *bytesOf(v: Version): AsyncGenerator<Uint8Array> {
    for (const c of v.chunks) yield await this.objects.get(c);
  }

  /**
   * Removes objects no catalog names (a keep cut off between its object writes and its
   * catalog write, a re-packed version's old chunks). Returns the bytes freed. Only an
   * object older than `graceMs` goes: a keep in flight in this process has written its
   * objects moments before its catalog.
   */
  async collect(graceMs = 60_000): Promise<{ objects: number; bytes: number }> {
    const { catalogs, damaged } = await this.list();
    // A damaged catalog may name objects we cannot see: collect nothing rather than guess.
    if (damaged.length > 0) return { objects: 0, bytes: 0 };
    const named = new Set<string>();
    for (const c of catalogs) {
      for (const f of c.files) for (const v of f.versions) for (const k of v.chunks) named.add(k.o);
    }
    const root = join(this.dir, OBJECTS_DIR);
    let objects = 0;
    let bytes = 0;
    // Object mtimes are the wall clock's, whatever clock the catalogs are stamped with.
    const now = Date.now();
    let fans: string[];
    try {
      fans = (await this.#fs.readDir(root)).filter((e) => e.isDirectory).map((e) => e.name);
    } catch (err) {
      if (err instanceof Deno.errors.NotFound) return { objects, bytes };
      throw err;
    }
    for (const fan of fans) {
      for (const e of await this.#fs.readDir(join(root, fan))) {
        const hash = e.name.split(".")[0]!;
        // Temps (".<name>.tmp-<pid>-…") are recover()'s: their writer may be alive.
        if (!e.isFile || e.name.startsWith(".") || named.has(hash)) continue;
        const path = join(root, fan, e.name);
        const st = await statOrNull(this.#fs, path);
        if (!st || (st.mtimeMs ?? 0) > now - graceMs) continue;
        await this.#fs.remove(path);
        objects++;
        bytes += st.size;
      }
    }
    return { objects, bytes };
  }

  /**
   * Brings the vault's objects within `maxBytes` (budget.ts gives the order), then
   * records what it took in budget.json. Catalogs are rewritten (or removed, emptied)
   * before any object goes, so a kill at any point leaves every catalog naming only
   * objects that exist; the objects a cut-off prune left behind are collect()'s.
   * Nothing is pruned while a catalog is damaged: it may name objects the plan would
   * count as orphans.
   */
  async prune(maxBytes: number): Promise<PruneReport> {
    if (!Number.isSafeInteger(maxBytes) || maxBytes < 0) {
      throw new RangeError(`A vault budget is a whole number of bytes, not ${maxBytes}`);
    }
    const { catalogs, damaged } = await this.list();
    const plan = planPrune(catalogs, maxBytes);
    const report: PruneReport = {
      before: plan.before,
      after: plan.after,
      versions: plan.steps.length,
      gone_files:
        new Set(plan.steps.filter((s) => s.why === "gone").map((s) => `${s.key}\0${s.path}`))
          .size,
      sessions: 0,
      over: plan.over,
      refused: null,
    };
    if (plan.steps.length === 0) return report;
    if (damaged.length > 0) {
      return {
        ...report,
        after: plan.before,
        versions: 0,
        gone_files: 0,
        over: true,
        refused: `${damaged.length} damaged catalog(s) in the vault`,
      };
    }
    const { changed, emptied } = applyPlan(catalogs, plan);
    for (const c of changed) await this.#write(c);
    for (const c of emptied) await this.#fs.remove(catalogPath(this.dir, c.key));
    if (emptied.length) await this.#fs.syncDir(join(this.dir, SESSIONS_DIR));
    const codecOf = new Map<string, string>();
    for (const s of plan.steps) for (const k of s.version.chunks) codecOf.set(k.o, k.c);
    for (const o of plan.orphans) {
      try {
        await this.#fs.remove(objectPath(this.dir, o, codecOf.get(o)!));
      } catch (err) {
        if (!(err instanceof Deno.errors.NotFound)) throw err;
      }
    }
    report.sessions = emptied.length;
    const prev = await this.budget();
    const rec: BudgetRecord = {
      v: 1,
      max_bytes: maxBytes,
      last_ms: this.#now(),
      last_before: plan.before,
      last_after: plan.after,
      over: plan.over,
      versions: (prev?.versions ?? 0) + report.versions,
      gone_files: (prev?.gone_files ?? 0) + report.gone_files,
      sessions: (prev?.sessions ?? 0) + report.sessions,
      bytes_freed: (prev?.bytes_freed ?? 0) + (plan.before - plan.after),
    };
    await writeFileAtomic(join(this.dir, BUDGET_FILE), JSON.stringify(rec), {
      fs: this.#fs,
      mode: FILE_MODE,
    });
    return report;
  }

  /** The budget's record, or null before it first bit (or when the record is unreadable). */
  async budget(): Promise<BudgetRecord | null> {
    try {
      const { bytes } = await this.#fs.readFileCapped(join(this.dir, BUDGET_FILE), 64 * 1024);
      const r = JSON.parse(new TextDecoder().decode(bytes));
      const nums = ["max_bytes", "last_ms", "last_before", "last_after", "versions", "gone_files"]
        .concat(["sessions", "bytes_freed"]);
      if (r?.v !== 1 || !nums.every((k) => Number.isSafeInteger(r[k]) && r[k] >= 0)) return null;
      return { ...r, over: r.over === true } as BudgetRecord;
    } catch {
      return null;
    }
  }

  /**
   * What a writer killed mid-keep (or mid-prune) left: the temps of dead writers in every
   * vault directory, and the objects no catalog names (collect). A process's Keeper runs
   * it once before its first keep.
   */
  async recover(): Promise<{ temps: number; objects: number; bytes: number }> {
    const dirs = [this.dir, join(this.dir, SESSIONS_DIR)];
    try {
      for (const e of await this.#fs.readDir(join(this.dir, OBJECTS_DIR))) {
        if (e.isDirectory) dirs.push(join(this.dir, OBJECTS_DIR, e.name));
      }
    } catch (err) {
      if (!(err instanceof Deno.errors.NotFound)) throw err;
    }
    let temps = 0;
    for (const d of dirs) temps += await removeOrphanTemps(d, { fs: this.#fs });
    return { temps, ...(await this.collect()) };
  }

  async #keepUnit(u: KeepUnit, r: KeepReport): Promise<void> {
    const now = this.#now();
    let c: Catalog | null;
    try {
      c = await this.read(u.key);
    } catch (err) {
      if (!(err instanceof TypeError || err instanceof SyntaxError)) throw err;
      await this.#setAside(u.key, now);
      c = null;
      r.errors.push(`${u.key}: its catalog was damaged and was set aside; a new one starts`);
    }
    const catalog = c ?? newCatalog({ key: u.key, source: u.source, sessionId: u.sessionId, now });
    let changed = false;
    for (const file of u.files) {
      const kept = catalog.files.find((f) => f.path === file.path) ?? null;
      const opened = await this.#open(file, kept);
      if (!opened.ok) {
        if (opened.reason === "missing" && kept && kept.gone_ms === null) {
          kept.gone_ms = now;
          changed = true;
          r.gone++;
        } else if (opened.reason !== "missing") {
          r.errors.push(`${u.key}: ${file.path} not kept (${opened.reason})`);
        }
        continue;
      }
      const h = opened.file;
      try {
        const out = await keepFile({
          objects: this.objects,
          file: h,
          last: kept ? latest(kept) : null,
          now,
        });
        if (kept?.gone_ms != null) {
          kept.gone_ms = null; // back in its place (restored, or recreated)
          changed = true;
        }
        if (out.version === null) {
          r.same++;
          continue;
        }
        let v = out.version;
        if (v.chunks.length > REPACK_AFTER_CHUNKS) v = await this.#repack(v);
        if (kept) {
          if (out.replace) kept.versions[kept.versions.length - 1] = v;
          else kept.versions.push(v);
        } else {
          const f: KeptFile = { path: file.path, role: file.role, versions: [v], gone_ms: null };
          catalog.files.push(f);
        }
        changed = true;
        if (out.kind === "new") r.new++;
        else if (out.kind === "append") r.appended++;
        else if (out.kind === "rewrite") r.rewritten++;
        else r.same++;
      } finally {
        await opened.close();
      }
    }
    // A file kept before that discovery no longer lists (deleted by its agent, or the
    // session's other copies are what it lists now): gone once it is missing.
    for (const f of catalog.files) {
      if (f.gone_ms !== null || u.files.some((x) => x.path === f.path)) continue;
      if (!(await this.#present(f))) {
        f.gone_ms = now;
        changed = true;
        r.gone++;
      }
    }
    if (!changed) return;
    catalog.last_kept_ms = now;
    await this.#write(catalog);
  }

  /** `v` with its chunks merged into as few as CHUNK_MAX_BYTES allows (same bytes). */
  async #repack(v: Version): Promise<Version> {
    const chunks: Chunk[] = [];
    let buf: Uint8Array[] = [];
    let len = 0;
    const flush = async () => {
      if (len === 0) return;
      const all = new Uint8Array(len);
      let at = 0;
      for (const b of buf) {
        all.set(b, at);
        at += b.length;
      }
      chunks.push(await this.objects.put(all));
      buf = [];
      len = 0;
    };
    for (const c of v.chunks) {
      if (len + c.n > CHUNK_MAX_BYTES) await flush();
      buf.push(await this.objects.get(c));
      len += c.n;
    }
    await flush();
    return { ...v, chunks };
  }

  async #write(c: Catalog): Promise<void> {
    const path = catalogPath(this.dir, c.key);
    await this.objects.ensureDir(join(this.dir, SESSIONS_DIR));
    await writeFileAtomic(path, JSON.stringify(c), { fs: this.#fs, mode: FILE_MODE });
  }

  async #setAside(key: string, now: number): Promise<void> {
    const path = catalogPath(this.dir, key);
    await this.#fs.rename(path, `${path}.damaged-${now}`);
  }

  /**
   * Whether kept file `f` is still in its place. A produced file has none: it is asked
   * only when its session is reported gone or no longer lists it, so it is not.
   */
  async #present(f: KeptFile): Promise<boolean> {
    if (f.role === EXPORT_ROLE) return false;
    const opened = await openContained(f.path, { hardlinks: "allow" });
    if (opened.ok) await opened.file.close();
    return opened.ok || opened.reason !== "missing";
  }

  async #open(file: KeepFileInput, kept: KeptFile | null): Promise<Opened> {
    if (file.produce) {
      return openProduced(file.produce, kept && kept.gone_ms === null ? latest(kept) : null);
    }
    const opened = await openContained(file.path, { hardlinks: "allow" });
    if (!opened.ok) return opened;
    const h = opened.file;
    return {
      ok: true,
      file: { size: h.size, mtimeMs: h.mtimeMs, read: (o, n) => h.read(o, n) },
      close: () => h.close(),
    };
  }
}
