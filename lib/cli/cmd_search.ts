/**
 * `intendant search QUERY`: answers from the store directly (no daemon needed) with the
 * same engine and the same results as the API. `--refresh` sweeps first; without it the
 * store is searched as the last sweep left it (the daemon keeps it fresh).
 */
import { resolveConfig } from "../config.ts";
import {
  buildCoverage,
  createMessageIndex,
  createSearchEngine,
  type SearchResponse,
  SOURCES,
} from "../message_search/mod.ts";
import { loadCursorKey } from "../server/mod.ts";
import { InvalidInputError } from "../errors.ts";
import { boolFlag, numberFlag, parseArgs, stringFlag } from "./parse_args.ts";
import type { CliIo, Command } from "./io.ts";
import { EXIT_OK } from "./exit_codes.ts";

const USAGE = `intendant search QUERY [--json] [--limit N] [--include-superseded] [--source S[,S]]
                 [--role user|assistant] [--project P] [--cursor C] [--refresh]`;

export const searchCommand: Command = {
  name: "search",
  summary: "search what was said to every agent (same engine and results as the API)",
  usage: USAGE,
  async run(argv: string[], io: CliIo): Promise<number> {
    const args = parseArgs(argv, {
      json: { type: "boolean" },
      limit: { type: "number" },
      "include-superseded": { type: "boolean" },
      source: { type: "string" },
      role: { type: "string" },
      project: { type: "string" },
      cursor: { type: "string" },
      refresh: { type: "boolean" },
    });
    const q = args.positionals.join(" ").trim();
    if (!q) throw new InvalidInputError("Missing QUERY");
    const source = csv(stringFlag(args, "source"), SOURCES, "--source");
    const role = csv(stringFlag(args, "role"), ["user", "assistant"] as const, "--role");
    const cfg = resolveConfig(io.env, { cwd: io.cwd });
    const { store, indexer } = await createMessageIndex(cfg);
    if (boolFlag(args, "refresh")) await indexer.sweep();
    const engine = createSearchEngine({
      store,
      windowDays: cfg.messageSearch.windowDays,
      cursorKey: await loadCursorKey(cfg.messageSearch.cacheRoot),
      isReady: () => true,
    });
    const res = await engine.search({
      q,
      limit: numberFlag(args, "limit"),
      cursor: stringFlag(args, "cursor") ?? null,
      include_superseded: boolFlag(args, "include-superseded"),
      source,
      role,
      project: stringFlag(args, "project"),
    });
    const manifest = await store.readManifest();
    if (boolFlag(args, "json")) {
      const coverage = buildCoverage(manifest, {
        ready: true,
        windowDays: cfg.messageSearch.windowDays,
        lastSweepAtMs: null,
        lastReport: null,
      });
      io.stdout(JSON.stringify({ ...res, coverage }, null, 2) + "\n");
    } else {
      if (Object.keys(manifest.sessions).length === 0) {
        io.stderr(
          "intendant: the message index is empty\nhint: run `intendant index` (or keep `intendant serve` running)\n",
        );
      }
      io.stdout(formatResults(res));
    }
    return EXIT_OK;
  },
};

function csv<T extends string>(
  raw: string | undefined,
  allowed: readonly T[],
  flag: string,
): T[] | undefined {
  if (raw === undefined) return undefined;
  const parts = raw.split(",").map((s) => s.trim()).filter(Boolean);
  for (const p of parts) {
    if (!allowed.includes(p as T)) {
      throw new InvalidInputError(`Invalid ${flag} "${p}": expected ${allowed.join(", ")}`);
    }
  }
  return parts as T[];
}

/** Marks the byte ranges of a hit inside its snippet with «». */
function mark(snippet: string, offset: number, ranges: [number, number][]): string {
  const bytes = new TextEncoder().encode(snippet);
  const dec = new TextDecoder();
  let out = "";
  let at = 0;
  for (const [a, b] of ranges) {
    const s = Math.max(a - offset, 0), e = Math.min(b - offset, bytes.length);
    if (e <= s || s < at) continue;
    out += dec.decode(bytes.subarray(at, s)) + "«" + dec.decode(bytes.subarray(s, e)) + "»";
    at = e;
  }
  return out + dec.decode(bytes.subarray(at));
}

/** The human listing. */
export function formatResults(res: SearchResponse): string {
  const lines: string[] = [];
  for (const g of res.groups) {
    lines.push(
      `${g.source} ${g.session_id}${g.title ? `  ${g.title}` : ""}${
        g.source_gone ? "  (source gone)" : ""
      }  [${g.total_hits} hit${g.total_hits === 1 ? "" : "s"}]`,
    );
    for (const h of g.hits) {
      const flags = [
        h.superseded ? "superseded" : "",
        h.truncated ? "truncated" : "",
        h.subagent ? "subagent" : "",
      ].filter(Boolean).join(",");
      const when = new Date(h.ts_ms).toISOString().slice(0, 16).replace("T", " ");
      lines.push(
        `  ${when} ${h.role}${flags ? ` [${flags}]` : ""}: ${
          mark(h.snippet, h.snippet_offset_bytes, h.ranges).replace(/\s+/g, " ")
        }`,
      );
    }
  }
  if (res.state === "partial") {
    lines.push(
      `(partial: ${res.partial_reason}${res.cursor ? "; more with --cursor " + res.cursor : ""})`,
    );
  } else if (res.cursor) lines.push(`(more: --cursor ${res.cursor})`);
  if (res.groups.length === 0) lines.push("no matches");
  return lines.join("\n") + "\n";
}
