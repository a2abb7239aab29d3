/**
 * Deep Search (GET /api/sessions/search, `scope=deep`, `intendant search --deep`, MCP
 * scope "deep"): the exhaustive path over what the message index leaves out by
 * construction: tool calls and their output, reasoning, runtime logs, diagnostics. A
 * folded substring (fold(), exactly like message search) is scanned session by session
 * in deep_units.ts order (every source: Intendant's own session directories, the agents'
 * transcript files the index names, the vault's copies of gone sessions), file by file.
 * Bounded per request: at most `maxBytes` read, `maxMs` spent (once DEEP_MIN_MAX_BYTES
 * are read, so a slow disk still progresses) and `limit` hits, then a resume cursor
 * (deep_cursor.ts) pointing exactly where the scan stopped; a caller streams by paging.
 * Every page says what it read (`scanned`: per source, from the vault, skipped files by
 * reason, sessions not scanned by design) and where it is (`progress`).
 * Reads go through the contained reader only (openInside; deep_open.ts for agent files
 * and vault copies): refused files are counted and skipped. Snippets are masked.
 * Matching is on the file's bytes as written: inside JSONL transcripts text sits in JSON
 * strings, where a quote is `\"` and a newline `\n`, so a query of words finds
 * output text but a query holding a quote or spanning two output lines does not.
 * `q` is never logged or echoed into errors.
 */
import { InvalidInputError } from "../errors.ts";
import { fold } from "../message_search/mod.ts";
import type { Vault } from "../vault/mod.ts";
import {
  decodeDeepCursor,
  type DeepCursor,
  encodeDeepCursor,
  needleFingerprint,
} from "./deep_cursor.ts";
import { compareScanned, scannedFiles } from "./deep_files.ts";
import { type DeepOpen, openAgentFile, openVersion } from "./deep_open.ts";
import { type ScanBudget, scanFile, type ScanPlace, type ScanPos } from "./deep_scan.ts";
import { DeepTally } from "./deep_tally.ts";
import { compareUnits, type DeepUnit, planDeepScan } from "./deep_units.ts";
import { openInside } from "./safe_fs.ts";
import type { CatalogDeps, DeepSearchResult } from "./types.ts";

/** Defaults and bounds. */
export const DEEP_DEFAULT_LIMIT = 100;
export const DEEP_MAX_LIMIT = 1000;
export const DEEP_DEFAULT_MAX_BYTES = 64 * 1024 * 1024;
/** Must exceed HIT_WINDOW_BYTES plus the longest overlap, so every page progresses. */
export const DEEP_MIN_MAX_BYTES = 64 * 1024;
export const DEEP_MAX_MAX_BYTES = 1024 * 1024 * 1024;
export const DEEP_QUERY_MAX_CHARS = 512;
/** Default time budget of one page: a dashboard shows progress about once a second. */
export const DEEP_DEFAULT_MAX_MS = 1500;
export const DEEP_MAX_MAX_MS = 60_000;

/** Options for {@link deepSearch}. */
export interface DeepSearchOptions {
  q: string;
  cursor?: string | null;
  /** @default DEEP_DEFAULT_LIMIT */
  limit?: number;
  /** Bytes read per request. @default DEEP_DEFAULT_MAX_BYTES */
  maxBytes?: number;
  /** Time spent per request (see the header). @default DEEP_DEFAULT_MAX_MS */
  maxMs?: number;
}

function check(o: DeepSearchOptions) {
  const { q, limit = DEEP_DEFAULT_LIMIT, maxBytes = DEEP_DEFAULT_MAX_BYTES } = o;
  const { maxMs = DEEP_DEFAULT_MAX_MS } = o;
  if (typeof q !== "string" || q.trim().length === 0 || q.length > DEEP_QUERY_MAX_CHARS) {
    throw new InvalidInputError(`Invalid q: expected 1-${DEEP_QUERY_MAX_CHARS} characters`);
  }
  if (!Number.isInteger(limit) || limit < 1 || limit > DEEP_MAX_LIMIT) {
    throw new RangeError(`Invalid limit "${limit}": expected 1-${DEEP_MAX_LIMIT}`);
  }
  if (
    !Number.isInteger(maxBytes) || maxBytes < DEEP_MIN_MAX_BYTES || maxBytes > DEEP_MAX_MAX_BYTES
  ) {
    throw new RangeError(
      `Invalid maxBytes "${maxBytes}": expected ${DEEP_MIN_MAX_BYTES}-${DEEP_MAX_MAX_BYTES}`,
    );
  }
  if (!Number.isInteger(maxMs) || maxMs < 1 || maxMs > DEEP_MAX_MAX_MS) {
    throw new RangeError(`Invalid maxMs "${maxMs}": expected 1-${DEEP_MAX_MAX_MS}`);
  }
  return { needle: fold(q), limit, maxBytes, maxMs };
}

const byPath = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

/** The unit's files in scan order (native: listed now; external: as planned). */
async function filesOf(u: DeepUnit): Promise<string[]> {
  return u.where === "native" ? await scannedFiles(u.dir!) : u.files ?? [];
}

/** Opens one of `u`'s files through the contained reader. */
async function openOf(u: DeepUnit, file: string, vault: Vault | null): Promise<DeepOpen> {
  if (u.where === "native") return await openInside(u.dir!, file);
  if (u.where === "file") return await openAgentFile(file);
  const v = u.versions?.get(file);
  if (!vault || !v) return { ok: false, reason: "missing" };
  return { ok: true, file: openVersion(vault, v) };
}

/** What a hit of `file` in `u` carries. */
function placeOf(u: DeepUnit, file: string): ScanPlace {
  return {
    key: u.key,
    source: u.source,
    sessionId: u.sessionId,
    file,
    jsonl: /\.jsonl(\.zst)?$/.test(file),
    ...(u.where === "vault" ? { from: "vault" as const } : {}),
  };
}

/** Exhaustive, bounded, paged substring scan over every source (see the header). */
export async function deepSearch(d: CatalogDeps, o: DeepSearchOptions): Promise<DeepSearchResult> {
  const { needle, limit, maxBytes, maxMs } = check(o);
  const from: DeepCursor | null = o.cursor ? decodeDeepCursor(o.cursor, needle) : null;
  const q = needleFingerprint(needle);
  const now = d.now ?? Date.now;
  const vault = d.vault ?? null;
  const plan = await planDeepScan(d, vault);
  const tally = new DeepTally();
  tally.out.not_scanned = plan.notScanned;
  tally.out.gone_unkept = plan.goneUnkept;
  const b: ScanBudget = {
    maxBytes,
    scanned: 0,
    limit,
    hits: [],
    deadline: now() + maxMs,
    minBytes: DEEP_MIN_MAX_BYTES,
    now,
  };
  const total = plan.units.length;
  const first = from
    ? plan.units.findIndex((u) => compareUnits(u, { c: from.c, key: from.k }) >= 0)
    : 0;
  const done = first < 0 ? total : first;
  for (let i = done; i < total; i++) {
    const u = plan.units[i]!;
    // The unit the cursor stopped in, read from the same place (a session whose files
    // went away between pages starts over in the vault's copies).
    const resumeHere = from !== null && from.k === u.key && from.c === u.c && from.w === u.where;
    let counted = false;
    for (const file of await filesOf(u)) {
      let start: ScanPos = { offset: 0, line: 1, mid: false };
      if (resumeHere) {
        const order = u.where === "native" ? compareScanned(file, from.f) : byPath(file, from.f);
        if (order < 0) continue;
        if (order === 0) start = { offset: from.o, line: from.n, mid: from.m };
      }
      let opened: DeepOpen;
      try {
        opened = await openOf(u, file, vault);
      } catch {
        opened = { ok: false, reason: "io_error" };
      }
      if (!opened.ok) {
        tally.skip(opened.reason);
        continue;
      }
      if (!counted) tally.session(u.source, u.where === "vault");
      counted = true;
      const before = b.scanned;
      let end;
      try {
        end = await scanFile(opened.file, placeOf(u, file), needle, start, b);
      } catch {
        // A copy that fails its check, a file that errors mid-read: counted, not fatal.
        tally.skip("io_error");
        continue;
      } finally {
        await opened.file.close();
        tally.file(u.source, b.scanned - before, u.where === "vault");
      }
      if (!end.done) {
        const next: DeepCursor = {
          v: 2,
          q,
          c: u.c,
          k: u.key,
          w: u.where,
          f: file,
          o: end.pos.offset,
          n: end.pos.line,
          m: end.pos.mid,
        };
        return {
          hits: b.hits,
          cursor: encodeDeepCursor(next),
          scanned_bytes: b.scanned,
          partial: end.reason !== "hits",
          scanned: tally.finish(end.reason),
          progress: { sessions_done: i, sessions_total: total },
        };
      }
    }
  }
  return {
    hits: b.hits,
    cursor: null,
    scanned_bytes: b.scanned,
    partial: false,
    scanned: tally.finish(null),
    progress: { sessions_done: total, sessions_total: total },
  };
}
