/**
 * Archive search (issue 29 item 4): sessions older than the message window, searchable on
 * request with the same engine (query/engine.ts: same fold, ranking, paging and cursors).
 *
 * Where: a second shard store at `<cache>/message_search/archive/v2`, opened with the
 * same openStore (so the same durable rules: data before pointer, atomic manifest and
 * journal, flock writer lock, quarantine of damage) and no window (it never expires what
 * it holds; a session whose files are later deleted stays, flagged source_gone).
 * What: only what the main index's window leaves out (archive_band.ts): the main index
 * is never re-extracted; its own old messages (a long session still in the window) are
 * read from the main store's files by the view (archive_view.ts).
 * When: a second Indexer with that band sweeps the archive store. In a long-lived
 * process (the daemon: `background`) it follows the main indexer: after a completed full
 * main sweep, at most every ARCHIVE_SWEEP_EVERY_MS, one sweep at a time, on at most
 * ARCHIVE_WORKERS extraction workers — so the backfill finishes first and the archive is
 * built behind it, never on the hot path. A one-shot caller sweeps it when asked (and
 * when it was never built).
 * How a query runs: a cold scan. Each archive query builds the view and a fresh engine
 * with an arena of ARCHIVE_ARENA_BYTES; segments are opened, scanned and released with
 * that engine when the query returns. Nothing is resident between archive queries, and
 * the main engine's arena is not used.
 * The vault: after each archive sweep, sessions whose only copy is the transcript vault's
 * (their agent deleted every file and neither store holds them) are read from the kept
 * copies by the same extractors (archive_vault.ts) and archived flagged source_gone; a
 * page names its groups that are such copies (`from_vault`). Without a vault (`vault`
 * null: INTENDANT_VAULT=off) they are not searched, and the page says so.
 * The answer says where it came from and what it did not cover (ArchiveBlock).
 */
import { dirname, join } from "node:path";
import { openStore, type Store } from "../store/mod.ts";
import type { Fs } from "../../durable/mod.ts";
import { Indexer, type SweepFollower, type SweepReport } from "../indexer.ts";
import type { Extractor } from "../extract/mod.ts";
import { createSearchEngine } from "../query/mod.ts";
import type { SearchRequest, SearchResponse } from "../query/mod.ts";
import { ARCHIVE_DIR, archiveBand, carryTombstones } from "./archive_band.ts";
import { archiveView } from "./archive_view.ts";
import {
  archiveKeptCopies,
  type ArchiveVault,
  type KeptCopies,
  onlyInVault,
  type VaultPassReport,
} from "./archive_vault.ts";

/** A background archive sweep starts at most this often (after main full sweeps). */
export const ARCHIVE_SWEEP_EVERY_MS = 60 * 60_000;
/** Extraction workers of an archive sweep: a low-priority share of the machine. */
export const ARCHIVE_WORKERS = 2;
/** What one archive query may keep loaded while it scans (released when it returns). */
export const ARCHIVE_ARENA_BYTES = 16 * 1024 * 1024;
export { ARCHIVE_DIR };

/** What an archive page says about where it came from and what it covered. */
export interface ArchiveBlock {
  /** Always true: this page is the archive's, not the windowed index's. */
  archive: true;
  /** The main window the archive extends (null: the main index keeps everything). */
  window_days: number | null;
  /** Messages before this (ms) are the archive's share. */
  cutoff_ms: number | null;
  /** Sessions the archive store holds (main sessions with old messages not counted). */
  archived_sessions: number;
  /** When an archive sweep last finished in this process, or null. */
  swept_at_ms: number | null;
  /** An archive sweep is running now. */
  building: boolean;
  /**
   * True when the archive was built, no archive sweep is running and the page is ready:
   * only the standing vault note below applies.
   */
  complete: boolean;
  /** What this page did not search, one plain sentence each. */
  not_covered: string[];
  /**
   * Keys of this page's groups whose files their agent deleted and whose only copy is the
   * transcript vault's (read from it when no index had read them): `intendant vault
   * restore` puts them back. Every one is also source_gone.
   */
  from_vault: string[];
}

/** An archive page: the engine's page and its archive block. */
export type ArchivePage = SearchResponse & { archive: ArchiveBlock };

/** Options for {@link openArchive}. */
export interface ArchiveOptions {
  /** The message-search cache root (`<state-root>/cache/message_search`). */
  cacheRoot: string;
  /** The main (windowed) store. */
  main: Store;
  windowDays: number | null;
  extractors: () => Promise<Extractor[]>;
  parserVersion: number;
  /** Sweep after the main's full sweeps (a long-lived process). @default false */
  background?: boolean;
  /** @default ARCHIVE_WORKERS */
  workers?: number;
  now?: () => number;
  logger?: (line: string) => void;
  /** The archive store's file access (fault tests). @default realFs */
  fs?: Fs;
  /** Repairs of main generations an archive query found damaged (the main indexer's). */
  onMainDamage?: Indexer["reportDamage"];
  /** The transcript vault, read after each sweep (archive_vault.ts); null: not read. */
  vault?: ArchiveVault | null;
}

/** An opened archive. */
export interface Archive extends SweepFollower {
  readonly store: Store;
  readonly indexer: Indexer;
  /** Sweeps the archive now (shared with one in flight), then reads the vault's copies. */
  sweep(): Promise<SweepReport>;
  /** What the last vault pass did, or null before one ran (or without a vault). */
  readonly vaultPass: VaultPassReport | null;
  /** One page of archive search (cold scan); `cursorKey` as the main engine's. */
  search(req: SearchRequest, o: { cursorKey: Uint8Array }): Promise<ArchivePage>;
}

/** Opens (creating) the archive store and its indexer. */
export async function openArchive(o: ArchiveOptions): Promise<Archive> {
  const { main, windowDays, now = Date.now, logger } = o;
  const store = await openStore({
    root: join(o.cacheRoot, ARCHIVE_DIR),
    parserVersion: o.parserVersion,
    windowDays: null,
    now,
    fs: o.fs,
    cacheReads: true,
  });
  let mainSweptAtMs: number | null = null;
  let sweptAtMs: number | null = null;
  let lastStartMs = -Infinity;
  let stopped = false;
  let background: Promise<unknown> | null = null;
  const indexer = new Indexer({
    store,
    extractors: o.extractors,
    windowDays: null,
    now,
    logger,
    workers: o.workers ?? ARCHIVE_WORKERS,
    band: async () => {
      const m = await main.readManifest();
      await carryTombstones(m, store);
      return archiveBand({ main: m, windowDays, nowMs: now(), mainSweptAtMs });
    },
  });
  let vaultPass: VaultPassReport | null = null;
  let kept: KeptCopies | null = null;
  // Vault sessions that published nothing, by kept state (in process: cheap to re-learn).
  const nothing = new Map<string, string>();
  const failed = new Map<string, { sig: string; reason: string }>();
  const readVault = async () => {
    if (!o.vault || stopped) return;
    kept ??= await o.vault.open();
    vaultPass = await archiveKeptCopies({
      vault: kept,
      extractorsUnder: o.vault.extractorsUnder,
      archive: store,
      main: await main.readManifest(),
      tempParent: dirname(store.root),
      nothing,
      failed,
      now,
      stop: () => stopped,
    });
    for (const e of vaultPass.errors) logger?.(`archive: vault copy not read: ${e}`);
  };
  const sweep = async () => {
    lastStartMs = now();
    const r = await indexer.sweep();
    // After the sweep: a session its files still back is the sweep's, never the vault's.
    await readVault();
    sweptAtMs = now();
    return r;
  };
  const afterSweep = (r: SweepReport) => {
    if (r.scope !== null) return;
    mainSweptAtMs = r.startedAtMs;
    if (!o.background || stopped || background) return;
    if (now() - lastStartMs < ARCHIVE_SWEEP_EVERY_MS) return;
    background = sweep().catch((err) =>
      logger?.(`archive sweep failed: ${err instanceof Error ? err.message : String(err)}`)
    ).finally(() => (background = null));
  };

  async function search(req: SearchRequest, c: { cursorKey: Uint8Array }): Promise<ArchivePage> {
    const view = archiveView({ archive: store, main, windowDays, nowMs: now() });
    // A fresh engine per query: its arena (and everything it loaded) goes with it.
    const engine = createSearchEngine({
      store: view.store,
      windowDays: null,
      cursorKey: archiveKey(c.cursorKey),
      arenaBytes: ARCHIVE_ARENA_BYTES,
      now,
      onDamage: (found) => {
        const m = found.filter((f) => view.isMain(f.generation));
        if (m.length > 0) o.onMainDamage?.(m);
        indexer.reportDamage(found.filter((f) => !view.isMain(f.generation)));
      },
    });
    const res = await engine.search(req);
    const a = await store.readManifest();
    const cutoff = Number.isFinite(view.cutoffMs) ? view.cutoffMs : null;
    const notCovered: string[] = [];
    const building = indexer.sweeping;
    if (sweptAtMs === null && Object.keys(a.sessions).length === 0) {
      notCovered.push(
        building
          ? "the archive is being built: sessions not yet read are not searched"
          : "the archive has not been built yet: old sessions the window skipped are not searched",
      );
    } else if (building) {
      notCovered.push("an archive sweep is running: sessions it has not reached are not searched");
    }
    if (!o.vault) {
      notCovered.push(
        "sessions whose files were deleted before the archive read them (the transcript " +
          "vault is off: no kept copy is searched)",
      );
    } else if (vaultPass && vaultPass.errors.length > 0) {
      const n = vaultPass.errors.length;
      notCovered.push(
        `${n} session${n === 1 ? "" : "s"} or catalog${n === 1 ? "" : "s"} kept only in ` +
          `the transcript vault could not be read (${vaultPass.errors[0]})`,
      );
    }
    // Without a vault, its standing note is the only gap a finished archive has.
    const standing = o.vault ? 0 : 1;
    const complete = notCovered.length === standing && res.state === "ready";
    const goneKeys = res.groups.filter((g) => g.source_gone).map((g) => g.session_key);
    let fromVault: string[] = [];
    if (o.vault && goneKeys.length > 0) {
      kept ??= await o.vault.open();
      fromVault = await onlyInVault(kept, goneKeys);
    }
    return {
      ...res,
      archive: {
        archive: true,
        window_days: windowDays,
        cutoff_ms: cutoff,
        archived_sessions: Object.keys(a.sessions).length,
        swept_at_ms: sweptAtMs,
        building,
        complete,
        not_covered: notCovered,
        from_vault: fromVault,
      },
    };
  }

  return {
    store,
    indexer,
    get vaultPass() {
      return vaultPass;
    },
    sweep,
    search,
    afterSweep,
    async settled() {
      while (background) await background;
      await indexer.settled();
    },
    async stop() {
      stopped = true;
      await indexer.stop();
      while (background) await background;
    },
  };
}

/** The archive's cursor key: a main cursor is refused here (another fingerprint), and back. */
function archiveKey(key: Uint8Array): Uint8Array {
  const tag = new TextEncoder().encode("archive:");
  const out = new Uint8Array(tag.length + key.length);
  out.set(tag);
  out.set(key, tag.length);
  return out;
}
