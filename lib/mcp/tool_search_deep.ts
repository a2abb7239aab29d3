/**
 * `search_messages` with `scope: "deep"`: one Deep Search page (lib/catalog deep_search.ts)
 * rendered for a model: words that appear only in tool calls and their output (build and
 * test errors), reasoning and runtime logs, in every source's files and the vault's copies
 * of deleted sessions. Each hit names its session, file and line, and quotes a masked
 * snippet with the match marked «…»; the page ends with what it scanned, in words, and
 * the cursor to continue when the scan is not finished. A page is bounded in time
 * (DEEP_MCP_PAGE_MS), bytes (the engine's default) and output (the tool's byte cap).
 * Only `query`, `limit` and `cursor` apply: the filters of message search do not (a deep
 * scan reads files as written), and a call that sets one is refused in words.
 */
import { InvalidInputError } from "../errors.ts";
import { type DeepHit, deepSearch, describeDeepScan } from "../catalog/mod.ts";
import type { McpBackend } from "./backend.ts";
import { field, FRAMING, markedSnippet, OutputBudget } from "./framing.ts";

/** One page's time budget: a model waits for the answer. */
export const DEEP_MCP_PAGE_MS = 5_000;
/** Hits per page unless asked. */
export const DEEP_MCP_DEFAULT_LIMIT = 20;

/** The arguments a deep call reads (the rest of search_messages' schema must be unset). */
export interface DeepArgs {
  query: string;
  limit?: number;
  cursor?: string;
  [other: string]: unknown;
}

const NOT_FOR_DEEP = ["sort", "source", "role", "project", "since", "until", "machine"];

function hitBlock(h: DeepHit): string {
  const at = h.line !== undefined
    ? ` line ${h.line}`
    : h.offset !== undefined
    ? ` byte ${h.offset}`
    : "";
  const from = h.from === "vault"
    ? " (read from the vault's copy: the agent deleted the file, or keeps it as database rows)"
    : "";
  return `- ${field(h.source)} session ${field(h.session_id)} (key ${field(h.key)}), file ` +
    `${field(h.file)}${at}${from}\n  ${markedSnippet(h.snippet, { offset: 0, ranges: h.ranges })}`;
}

/** Runs one deep page; the result text. */
export async function searchDeep(
  b: McpBackend,
  args: DeepArgs,
  o: { maxBytes: number },
): Promise<string> {
  const set = NOT_FOR_DEEP.find((k) => args[k] !== undefined) ??
    (args.include_superseded ? "include_superseded" : undefined);
  if (set) {
    throw new InvalidInputError(
      `Invalid ${set}: scope "deep" scans every file as written and takes only query, limit and cursor`,
    );
  }
  if (b.team) {
    throw new InvalidInputError(
      'Invalid scope: "deep" scans this machine\'s files; the team server has none',
    );
  }
  const q = args.query.trim();
  if (q.length < 2) throw new InvalidInputError("Invalid query: expected words to search for");
  const page = await deepSearch(await b.catalog(), {
    q,
    cursor: args.cursor ?? null,
    limit: Math.min(args.limit ?? DEEP_MCP_DEFAULT_LIMIT, 200),
    maxMs: DEEP_MCP_PAGE_MS,
  });
  const out = new OutputBudget(o.maxBytes);
  out.add(FRAMING);
  out.add(
    `search_messages (scope deep): ${page.hits.length} match(es) on this page, in tool ` +
      "calls and output, reasoning and logs as well as messages, newest session first.",
  );
  let shown = 0;
  for (const h of page.hits) {
    if (!out.add(hitBlock(h))) break;
    shown++;
  }
  const notes = describeDeepScan(page.scanned, { hits: shown }).map((l) => `(${l})`);
  if (shown < page.hits.length) {
    notes.push(
      `Output cap reached after ${shown} of ${page.hits.length} matches: ask again with a ` +
        "smaller limit to see them page by page.",
    );
  }
  if (page.cursor) {
    const p = page.progress;
    notes.push(
      `The scan is not finished (${p.sessions_done} of ${p.sessions_total} sessions; this page ` +
        `stopped on its ${page.scanned.stopped} budget). More: call search_messages again ` +
        `with the same query, scope "deep" and cursor=${JSON.stringify(page.cursor)}`,
    );
  } else if (page.hits.length === 0) {
    notes.push("No matches: the scan is complete (anything it could not read is listed above).");
  } else notes.push("End of results: the scan is complete.");
  return out.text(notes.join("\n"));
}
