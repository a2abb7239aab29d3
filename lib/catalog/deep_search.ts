/**
 * Deep Search (GET /api/sessions/search): the exhaustive audit path over FULL native
 * logs, reaching what the message index excludes by construction (reasoning, tool
 * output, runtime logs, diagnostics). A folded substring (fold(), exactly like message
 * search) is scanned session by session, newest first (meta created_at_ms, then id: an
 * order that never changes while a client pages), file by file in deep_files.ts order.
 * Bounded per request: at most `maxBytes` read and `limit` hits, then a resume cursor
 * (deep_cursor.ts) pointing exactly where the scan stopped. Only regular files inside
 * session directories under logsDir are read (openInside); refused files are skipped.
 * `q` is never logged or echoed into errors.
 */
import { InvalidInputError } from "../errors.ts";
import { fold } from "../message_search/mod.ts";
import {
  decodeDeepCursor,
  type DeepCursor,
  encodeDeepCursor,
  needleFingerprint,
} from "./deep_cursor.ts";
import { compareScanned, scannedFiles } from "./deep_files.ts";
import { type ScanBudget, scanFile, type ScanPos } from "./deep_scan.ts";
import { discoverNative, type NativeFacts } from "./native_facts.ts";
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

/** Options for {@link deepSearch}. */
export interface DeepSearchOptions {
  q: string;
  cursor?: string | null;
  /** @default DEEP_DEFAULT_LIMIT */
  limit?: number;
  /** Bytes read per request. @default DEEP_DEFAULT_MAX_BYTES */
  maxBytes?: number;
}

function check(o: DeepSearchOptions): { needle: string; limit: number; maxBytes: number } {
  const { q, limit = DEEP_DEFAULT_LIMIT, maxBytes = DEEP_DEFAULT_MAX_BYTES } = o;
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
  return { needle: fold(q), limit, maxBytes };
}

const createdOf = (f: NativeFacts) => f.meta?.created_at_ms ?? -1;

/** Scan order: newest created first, then id. Negative: `a` comes first. */
function compareSessions(a: { c: number; s: string }, b: { c: number; s: string }): number {
  return b.c - a.c || (a.s < b.s ? -1 : a.s > b.s ? 1 : 0);
}

/** Exhaustive, bounded, paged substring scan over the native logs. */
export async function deepSearch(d: CatalogDeps, o: DeepSearchOptions): Promise<DeepSearchResult> {
  const { needle, limit, maxBytes } = check(o);
  const from: DeepCursor | null = o.cursor ? decodeDeepCursor(o.cursor, needle) : null;
  const q = needleFingerprint(needle);
  const sessions = (await discoverNative(d.logsDir))
    .map((f) => ({ f, key: { c: createdOf(f), s: f.id } }))
    .sort((a, b) => compareSessions(a.key, b.key))
    .filter(({ key }) => !from || compareSessions(key, { c: from.c, s: from.s }) >= 0);
  const b: ScanBudget = { maxBytes, scanned: 0, limit, hits: [] };
  for (const { f, key } of sessions) {
    const resumeHere = from !== null && from.s === f.id && from.c === key.c;
    for (const rel of await scannedFiles(f.dir)) {
      let start: ScanPos = { offset: 0, line: 1, mid: false };
      if (resumeHere) {
        const order = compareScanned(rel, from.f);
        if (order < 0) continue;
        if (order === 0) start = { offset: from.o, line: from.n, mid: from.m };
      }
      const opened = await openInside(f.dir, rel);
      if (!opened.ok) continue;
      let end;
      try {
        end = await scanFile(opened.file, { rel, sessionId: f.id }, needle, start, b);
      } finally {
        await opened.file.close();
      }
      if (!end.done) {
        const next: DeepCursor = {
          v: 1,
          q,
          c: key.c,
          s: f.id,
          f: rel,
          o: end.pos.offset,
          n: end.pos.line,
          m: end.pos.mid,
        };
        return {
          hits: b.hits,
          cursor: encodeDeepCursor(next),
          scanned_bytes: b.scanned,
          partial: end.reason === "bytes",
        };
      }
    }
  }
  return { hits: b.hits, cursor: null, scanned_bytes: b.scanned, partial: false };
}
