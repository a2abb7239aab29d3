/**
 * The archive's vault pass: sessions whose only copy is the transcript vault's (their
 * agent deleted every file, and no index holds them: older than the window, or never
 * read) are read from their kept copies into the archive store, so archive search finds
 * them, flagged source_gone like every archived session whose files went.
 *
 * How a session is read: the last kept version of each of its files is written, chunk by
 * chunk as Vault.bytesOf yields it (one chunk in memory), into a private mirror directory
 * `<cache>/message_search/archive/vault-read-<random>/` (0700; files 0600) at its original
 * absolute path below the mirror; the source's own extractor, built over the mirrored
 * homes (`extractorsUnder`), discovers and extracts it exactly as it would the original
 * (same discovery, same parse, same locators: paths relative to a home are unchanged).
 * Which sessions: a catalog neither store holds nor tombstones whose every file is
 * missing from its place (gone_ms is set only by the next keep, which a one-shot process
 * never runs, so one lstat per file of those few catalogs decides; nothing is read).
 * The mirror is removed before the next session is read, whatever happened, so at most
 * one session's bytes are ever on disk twice; a mirror left by a killed process is
 * removed by the next pass once older than MIRROR_STALE_MS.
 * What is published: one replace update, its cursors and meta.files naming the original
 * paths (never the mirror's), then one "gone" update (source_gone), both through the
 * archive store's publish path (lock, base check). Never read: a key either store holds
 * or tombstones (a deleted session stays deleted), a catalog with a file still in place
 * (the sweep reads the original), a session that published nothing before with the same
 * kept state (remembered per process).
 * Containment: every byte comes through the vault's reader (list/bytesOf: objects
 * verified against their hash); a catalog path that is not normalized (a `..`) is
 * refused, so no write leaves the mirror. Errors are per session, named in the report
 * (what archive search's not_covered says); one session's failure never stops the pass.
 */
import { dirname, join, normalize } from "node:path";
import type { CatalogList, Version } from "../../vault/mod.ts";
import { type Fs, realFs } from "../../durable/mod.ts";
import type { Manifest, ShardUpdate, Store } from "../store/mod.ts";
import type { Extractor, SessionUnit } from "../extract/mod.ts";
import type { FileCursor } from "../cursor_types.ts";
import { cursorFingerprint, cursorWatermark } from "../cursor.ts";

/** A mirror directory older than this was left by a killed pass (a pass reads one session). */
export const MIRROR_STALE_MS = 60 * 60_000;
/** Prefix of a mirror directory under the archive's directory. */
export const MIRROR_PREFIX = "vault-read-";

/** What the pass reads of the vault: lib/vault's Vault (list, read and bytesOf). */
export interface KeptCopies {
  list(): Promise<CatalogList>;
  read(key: string): Promise<CatalogList["catalogs"][number] | null>;
  bytesOf(v: Version): AsyncIterable<Uint8Array>;
}

/** The vault as the archive is given it (null: the vault is off). */
export interface ArchiveVault {
  /** Opens the vault's reader (lazily: only an archive sweep reads it). */
  open(): Promise<KeptCopies>;
  /** The extractors of every source, over the homes mirrored under `mirror`. */
  extractorsUnder(mirror: string): Promise<Extractor[]>;
}

/** What one pass did. */
export interface VaultPassReport {
  /** Gone sessions not in either store: the candidates. */
  candidates: number;
  /** Published into the archive. */
  published: number;
  /** Read and found to say nothing (remembered until their catalog changes). */
  nothing: number;
  /** One line per session or catalog that could not be read. */
  errors: string[];
}

/** Options for {@link archiveKeptCopies}. */
export interface VaultPassOptions {
  vault: KeptCopies;
  extractorsUnder: ArchiveVault["extractorsUnder"];
  /** The archive store (written) and the main manifest (only read). */
  archive: Store;
  main: Manifest;
  /** Where mirrors are made: the archive's directory under the cache root. */
  tempParent: string;
  /**
   * key → kept-state signature of sessions that published nothing, or failed (with why),
   * kept by the caller: the same kept state is not read again; a failure is still reported.
   */
  nothing: Map<string, string>;
  failed?: Map<string, { sig: string; reason: string }>;
  now?: () => number;
  /** @default realFs */
  fs?: Fs;
  /** Asked between sessions (a stopping daemon). */
  stop?: () => boolean;
}

type Catalog = CatalogList["catalogs"][number];

/** Reads every vault-only session into the archive (see the module header). */
export async function archiveKeptCopies(o: VaultPassOptions): Promise<VaultPassReport> {
  const { vault, archive, main, nothing, now = Date.now, fs = realFs } = o;
  const r: VaultPassReport = { candidates: 0, published: 0, nothing: 0, errors: [] };
  await removeStaleMirrors(o.tempParent, now());
  const listed = await vault.list();
  for (const d of listed.damaged) r.errors.push(`vault catalog unreadable: ${d}`);
  const a = await archive.readManifest();
  for (const c of listed.catalogs) {
    if (o.stop?.()) break;
    if (!c.files.length) continue;
    // A database source's copy is an export of its rows (role "export", lib/vault
    // db_export.ts), which no extractor reads: Deep Search scans it, the archive does not.
    if (c.files.some((f) => f.role === "export")) continue;
    const held = (m: Manifest) =>
      m.sessions[c.key] !== undefined || m.tombstones[c.key] !== undefined;
    if (held(main) || held(a)) continue;
    // The vault marks a file gone at its next keep; a one-shot process keeps nothing, so
    // a file still in place (one lstat, nothing read) leaves the session to the sweep.
    if (!(await allMissing(fs, c))) continue;
    r.candidates++;
    const sig = keptSignature(c);
    if (nothing.get(c.key) === sig) continue;
    const failedBefore = o.failed?.get(c.key);
    if (failedBefore?.sig === sig) {
      r.errors.push(`${c.key}: ${failedBefore.reason}`);
      continue;
    }
    try {
      const done = await readOne(c, { ...o, fs, now });
      if (done === "published") {
        r.published++;
        nothing.delete(c.key);
      } else {
        r.nothing++;
        nothing.set(c.key, sig);
      }
      o.failed?.delete(c.key);
    } catch (err) {
      const reason = err instanceof Error ? err.message : String(err);
      o.failed?.set(c.key, { sig, reason });
      r.errors.push(`${c.key}: ${reason}`);
    }
  }
  return r;
}

/**
 * Which of `keys` (a page's source_gone groups) have only the vault's copy left: a
 * catalog, and none of its files in place. One catalog read and a few lstats per key.
 */
export async function onlyInVault(
  vault: KeptCopies,
  keys: readonly string[],
  fs: Fs = realFs,
): Promise<string[]> {
  const out: string[] = [];
  for (const key of keys) {
    const c = await vault.read(key);
    if (c && c.files.length > 0 && (await allMissing(fs, c))) out.push(key);
  }
  return out;
}

/** True when no file of `c` is at its path (lstat: a symlink there counts as present). */
async function allMissing(fs: Fs, c: Catalog): Promise<boolean> {
  for (const f of c.files) {
    try {
      await fs.lstat(f.path);
      return false;
    } catch (err) {
      if (!(err instanceof Deno.errors.NotFound)) throw err;
    }
  }
  return true;
}

/** What a catalog's kept state is: a change (a new version, a restore) reads it again. */
function keptSignature(c: Catalog): string {
  return JSON.stringify(c.files.map((f) => [f.path, f.versions.length, f.versions.at(-1)!.size]));
}

async function readOne(
  c: Catalog,
  o: VaultPassOptions & { fs: Fs; now: () => number },
): Promise<"published" | "nothing"> {
  const mirror = await Deno.makeTempDir({ dir: o.tempParent, prefix: MIRROR_PREFIX });
  try {
    for (const f of c.files) await materialise(o, mirror, f.path, f.versions.at(-1)!);
    const ex = (await o.extractorsUnder(mirror)).find((e) => e.source === c.source);
    if (!ex) throw new TypeError(`No extractor for source "${c.source}"`);
    const unit = (await ex.discover()).units.find((u) => u.key === c.key);
    if (!unit) {
      throw new TypeError(
        `its kept files are not under a home the ${c.source} extractor reads now`,
      );
    }
    const out = await ex.extract(unit, null, { now: o.now() });
    if (out.kind !== "replace" && out.kind !== "append") return "nothing";
    if (!out.records.length) return "nothing";
    const back = (p: string) => (p.startsWith(mirror + "/") ? p.slice(mirror.length) : p);
    const cursors: Record<string, FileCursor> = {};
    for (const [p, cur] of Object.entries(out.cursors)) cursors[back(p)] = cur;
    const update: ShardUpdate = {
      kind: "replace",
      ...common(unit),
      base: null,
      segment: { records: out.records, marks: out.marks },
      cursors,
      state: out.state,
      source_watermark: cursorWatermark(cursors),
      source_fingerprint: cursorFingerprint(cursors),
      meta: { ...out.meta, files: out.meta.files.map(back) },
      skipped: out.skipped,
    };
    await publishOrThrow(o.archive, update);
    const entry = (await o.archive.readManifest()).sessions[c.key];
    if (entry && !entry.source_gone) {
      // Its files are gone: flagged like every archived session whose agent deleted them.
      await publishOrThrow(o.archive, { kind: "gone", ...common(unit), base: entry.generations });
    }
    return "published";
  } finally {
    // A private directory we made: removed whole, whatever the read did.
    await Deno.remove(mirror, { recursive: true });
  }
}

function common(u: SessionUnit) {
  return { key: u.key, source: u.source, session_id: u.sessionId };
}

async function publishOrThrow(store: Store, update: ShardUpdate): Promise<void> {
  const res = await store.publish([update]);
  const bad = res.rejected.find((x) => x.key === update.key);
  if (bad) throw new TypeError(`archive publish refused (${bad.reason})`);
}

/** Writes version `v` of the file kept at `path` to the same path under `mirror`. */
async function materialise(
  o: { vault: KeptCopies; fs: Fs },
  mirror: string,
  path: string,
  v: Version,
): Promise<void> {
  // parseCatalog checked it is absolute; a `..` could still climb out of the mirror.
  if (normalize(path) !== path) throw new TypeError(`Refusing kept path "${path}"`);
  const target = join(mirror, path);
  await mkdirUnder(o.fs, mirror, dirname(target));
  const h = await o.fs.createNew(target, 0o600);
  try {
    for await (const chunk of o.vault.bytesOf(v)) await h.writeAll(chunk);
  } finally {
    h.close();
  }
  // Sources sort and judge freshness by mtime: the kept one, as a restore writes it.
  const at = new Date(v.mtime_ms);
  await Deno.utime(target, at, at);
}

/** mkdir -p of `dir` (inside `root`, which exists), every new directory 0700. */
async function mkdirUnder(fs: Fs, root: string, dir: string): Promise<void> {
  const parts = dir.slice(root.length).split("/").filter(Boolean);
  let at = root;
  for (const p of parts) {
    at = join(at, p);
    try {
      await fs.mkdir(at, 0o700);
    } catch (err) {
      if (!(err instanceof Deno.errors.AlreadyExists)) throw err;
    }
  }
}

/** Removes mirrors a killed pass left (older than MIRROR_STALE_MS: a live pass's is young). */
async function removeStaleMirrors(parent: string, nowMs: number): Promise<void> {
  let entries;
  try {
    entries = await realFs.readDir(parent);
  } catch (err) {
    if (err instanceof Deno.errors.NotFound) return;
    throw err;
  }
  for (const e of entries) {
    if (!e.isDirectory || !e.name.startsWith(MIRROR_PREFIX)) continue;
    const p = join(parent, e.name);
    const st = await realFs.lstat(p);
    if ((st.mtimeMs ?? nowMs) < nowMs - MIRROR_STALE_MS) await Deno.remove(p, { recursive: true });
  }
}
