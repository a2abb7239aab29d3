/**
 * `intendant search --deep QUERY`: Deep Search (lib/catalog deep_search.ts) from the
 * terminal: every source's files, the vault's copies of gone sessions, tool output and
 * reasoning included. It runs in this process, with or without a daemon: a deep scan
 * reads files, not the warm index, so a daemon would only add a hop. The scan is paged
 * (bounded pages of DEEP_PAGE_MS) and each page's hits print as they arrive, with a
 * progress line on a TTY; it stops at `--limit` matches (default DEEP_CLI_LIMIT) and then
 * says how to go on (`--cursor`). The closing lines say exactly what was scanned (per
 * source, from the vault), which files could not be read and why, and which sessions are
 * not scanned by design; "no matches" only after a complete scan.
 * An index that was never built is built first (deep search lists the agents' files from
 * it); `--refresh` sweeps first too. Snippets arrive masked; every string goes through
 * terminalSafe.
 */
import type { ResolvedConfig } from "../config.ts";
import {
  addDeepScanned,
  type CatalogDeps,
  DEEP_MAX_LIMIT,
  type DeepHit,
  type DeepScanned,
  deepSearch,
  type DeepSearchResult,
  describeDeepScan,
  emptyDeepScanned,
} from "../catalog/mod.ts";
import { createMessageIndex } from "../message_search/mod.ts";
import { markSnippet } from "../secrets/mod.ts";
import { formatBytes, stringifyTerminalSafe, terminalSafe } from "../text/mod.ts";
import { Vault } from "../vault/mod.ts";
import type { CliIo } from "./io.ts";
import type { StatusLine } from "./status_line.ts";

/** Matches printed before the CLI stops and offers a cursor. */
export const DEEP_CLI_LIMIT = 100;
/** One page's time budget: the progress line moves about this often. */
const DEEP_PAGE_MS = 1000;

/** Options of {@link runDeepSearch}. */
export interface DeepCliOptions {
  cfg: ResolvedConfig;
  io: CliIo;
  status: StatusLine;
  q: string;
  limit?: number;
  cursor: string | null;
  refresh: boolean;
  json: boolean;
}

/** One hit as two lines: where, then the marked snippet. */
export function deepHitLines(h: DeepHit): string {
  const at = h.line !== undefined ? `:${h.line}` : h.offset !== undefined ? ` @${h.offset}` : "";
  const from = h.from === "vault" ? "  (from the vault's copy)" : "";
  const snippet = markSnippet(h.snippet, { offset: 0, ranges: h.ranges, mask: false });
  return `${terminalSafe(h.source)} ${terminalSafe(h.session_id)}  ${
    terminalSafe(h.file)
  }${at}${from}\n` +
    `  ${snippet}\n`;
}

/** The closing lines: what was scanned, what was not, and how to go on. */
export function deepSummary(
  s: DeepScanned,
  o: { hits: number; cursor: string | null; q: string },
): string {
  const lines = describeDeepScan(s, o).map((l) => `(${l})`);
  if (o.cursor) {
    lines.push(
      `(stopped at the match limit; more: intendant search --deep ${
        JSON.stringify(o.q)
      } --cursor ${o.cursor})`,
    );
  } else if (o.hits === 0 && s.complete) lines.push("no matches");
  return lines.map((l) => terminalSafe(l)).join("\n") + "\n";
}

/** Runs the scan (see the header). */
export async function runDeepSearch(o: DeepCliOptions): Promise<void> {
  const { cfg, io, status } = o;
  const limit = o.limit ?? DEEP_CLI_LIMIT;
  if (!Number.isInteger(limit) || limit < 1 || limit > 100_000) {
    throw new RangeError(`Invalid --limit "${limit}": expected 1-100000`);
  }
  const { store, indexer } = await createMessageIndex(cfg);
  if (o.refresh || Object.keys((await store.readManifest()).sessions).length === 0) {
    status.update("indexing first: deep search lists the agents' files from the index…");
    await indexer.sweep();
  }
  const deps: CatalogDeps = {
    logsDir: cfg.logsDir,
    store,
    namesPath: cfg.sessionNamesPath,
    vault: new Vault({ dir: cfg.vault.dir }),
  };
  const total = emptyDeepScanned();
  const hits: DeepHit[] = [];
  let cursor = o.cursor;
  let page: DeepSearchResult;
  do {
    page = await deepSearch(deps, {
      q: o.q,
      cursor,
      limit: Math.min(DEEP_MAX_LIMIT, limit - hits.length),
      maxMs: DEEP_PAGE_MS,
    });
    addDeepScanned(total, page.scanned);
    hits.push(...page.hits);
    if (!o.json) { for (const h of page.hits) io.stdout(deepHitLines(h)); }
    cursor = page.cursor;
    const p = page.progress;
    status.update(
      `deep search: ${p.sessions_done} of ${p.sessions_total} sessions, ${
        formatBytes(total.bytes)
      } read, ${hits.length} matches…`,
    );
  } while (cursor !== null && hits.length < limit);
  status.done();
  if (o.json) {
    io.stdout(stringifyTerminalSafe({ hits, cursor, scanned: total }) + "\n");
  } else io.stdout(deepSummary(total, { hits: hits.length, cursor, q: o.q }));
}
