/**
 * What `intendant search` prints: the human listing (formatResults), the hints that go to
 * stderr (searchHints), and the masking of a team answer (maskForeignGroups).
 *  - Every string from a transcript or the team database goes through terminalSafe; a
 *    snippet is one line with its matches marked «…» and "…" where the message goes on.
 *  - The last line says how many sessions the page holds out of how many: "20 of 57
 *    sessions" when the engine counted the whole query, "20+ sessions" when more exist and
 *    were not counted, never a count that does not settle.
 *  - "no matches" only after the whole index was searched; a suggestion (what a wider
 *    search would find, counted by the engine) is a hint on stderr, so stdout stays the
 *    listing alone.
 *  - Team answers: another machine's text is someone else's, so its groups are masked on
 *    every surface — the CLI included (titles, projects, snippets with their highlight
 *    ranges moved onto the masked text). This machine's own groups are masked too unless
 *    the user asks (`--unmask-own`): a team listing is often pasted where others read it.
 */
import {
  onlyCommonLine,
  relevanceLabel,
  type SearchGroup,
  type SearchResponse,
  type SearchSuggestions,
} from "../message_search/mod.ts";
import { markSnippet, maskSecrets, maskWithRanges } from "../secrets/mod.ts";
import { terminalSafe } from "../text/mod.ts";

/** Who answered a page. */
export type AnsweredBy = "daemon" | "store" | "team";

/** Session keys shown in the degraded note; the rest are counted. */
const DEGRADED_KEYS_SHOWN = 5;

function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? "" : "s"}`;
}

/** The plain statement of sessions a page could not search (see SearchResponse). */
function degradedNote(d: NonNullable<SearchResponse["degraded"]>, by: AnsweredBy): string {
  const rebuilding = d.count - d.lost;
  const parts: string[] = [];
  if (rebuilding > 0) {
    parts.push(
      `${plural(rebuilding, "session")} could not be searched: ${
        rebuilding === 1 ? "its" : "their"
      } index data is damaged and ${
        by === "daemon"
          ? "is being rebuilt (search again in a moment)"
          : "is rebuilt by the next sweep (run `intendant index`)"
      }`,
    );
  }
  if (d.lost > 0) {
    parts.push(
      `${plural(d.lost, "session")} could not be searched and cannot be rebuilt: ${
        d.lost === 1 ? "its" : "their"
      } index data was damaged and ${d.lost === 1 ? "its" : "their"} source files are gone`,
    );
  }
  const shown = d.sessions.slice(0, DEGRADED_KEYS_SHOWN).map((s) => terminalSafe(s.session_key));
  const more = d.count - shown.length;
  return `(partial: ${parts.join("; ")}: ${shown.join(", ")}${
    more > 0 ? ` and ${more} more` : ""
  })`;
}

/**
 * "20 of 57 sessions", "20+ sessions" or "57 sessions": the page's groups against the
 * query's total (on a cursor page too: the engine's total is the whole query's).
 */
export function countLine(res: SearchResponse): string {
  const n = res.groups.length;
  if (res.total_sessions !== undefined) {
    return res.total_sessions === n && res.cursor === null
      ? plural(n, "session")
      : `${n} of ${plural(res.total_sessions, "session")}`;
  }
  return res.cursor !== null ? `${n}+ sessions` : plural(n, "session");
}

/** The human listing. */
export function formatResults(res: SearchResponse, o: { answeredBy?: AnsweredBy } = {}): string {
  const lines: string[] = [];
  for (const g of res.groups) lines.push(...groupLines(g));
  if (res.degraded) lines.push(degradedNote(res.degraded, o.answeredBy ?? "store"));
  if (res.state === "partial" && res.partial_reason !== "degraded") {
    const why = res.partial_reason === "timeout"
      ? "the search ran out of time; some sessions were not searched"
      : "the page reached the response size limit";
    lines.push(
      `(partial: ${countLine(res)} shown; ${why}${
        res.cursor ? "; more with --cursor " + res.cursor : ""
      })`,
    );
  } else if (res.cursor) lines.push(`(${countLine(res)}; more: --cursor ${res.cursor})`);
  else if (res.groups.length > 0) lines.push(`(${countLine(res)})`);
  if (res.groups.length === 0) {
    // Only a complete scan may say there is nothing: anything else says what is missing.
    const common = onlyCommonLine(res.query_terms);
    if (common) lines.push(common);
    else if (res.state === "ready") lines.push("no matches");
    else if (res.state === "building" && o.answeredBy === "team") {
      lines.push(
        "no matches yet: no machine has published to the team database\n" +
          "hint: run `intendant index --team URL` (or keep `intendant serve --team URL` running)",
      );
    } else if (res.state === "building") {
      lines.push(
        "no matches yet: the message index is empty or still being built\n" +
          "hint: run `intendant index` (or keep `intendant serve` running)",
      );
    } else lines.push("no matches in the part that was searched");
  }
  return lines.join("\n") + "\n";
}

function groupLines(g: SearchGroup & { machine?: unknown }): string[] {
  // Team answers name each session's machine first (machine names are validated labels,
  // still printed through terminalSafe like everything from the database).
  const machine = typeof g.machine === "string" ? `${terminalSafe(g.machine)} ` : "";
  const out = [
    `${machine}${terminalSafe(g.source)} ${terminalSafe(g.session_id)}${
      g.title ? `  ${terminalSafe(g.title)}` : ""
    }${g.source_gone ? "  (source gone)" : ""}  [${plural(g.total_hits, "hit")}]${
      relevanceLabel(g.relevance) ? `  (${relevanceLabel(g.relevance)})` : ""
    }`,
  ];
  for (const h of g.hits) {
    const flags = [
      h.superseded ? "superseded" : "",
      h.truncated ? "truncated" : "",
      h.subagent ? "subagent" : "",
    ].filter(Boolean).join(",");
    const when = new Date(h.ts_ms).toISOString().slice(0, 16).replace("T", " ");
    // Masking, when due, was applied to the page already (maskForeignGroups).
    const snippet = markSnippet(h.snippet, {
      offset: h.snippet_offset_bytes,
      ranges: h.ranges,
      cutEnd: h.snippet_cut_end,
      mask: false,
    });
    out.push(`  ${when} ${terminalSafe(h.role)}${flags ? ` [${flags}]` : ""}: ${snippet}`);
  }
  return out;
}

/** The flag each suggestion names, and what it does in words. */
const SUGGESTION_FLAGS: Record<keyof SearchSuggestions, string> = {
  include_superseded: "--include-superseded (rewound messages too)",
  all_sources: "without --source (every agent)",
  all_roles: "without --role (both roles)",
};

/** Hint lines for stderr: what a wider search would find (only what the engine counted). */
export function searchHints(res: SearchResponse): string[] {
  const t = res.query_terms;
  // A relevance page says which words it searched when it dropped some (stopwords).
  const terms = t && !t.only_common && t.dropped.length > 0
    ? [`searched: ${t.kept.join(", ")} (left out as common: ${t.dropped.join(", ")})`]
    : [];
  const s = res.suggestions;
  if (!s) return terms.map((x) => terminalSafe(x));
  return [
    ...terms.map((x) => terminalSafe(x)),
    ...(Object.keys(SUGGESTION_FLAGS) as (keyof SearchSuggestions)[]).flatMap((k) => {
      const found = s[k];
      if (!found) return [];
      const n = `${found.sessions}${found.more ? "+" : ""} session${
        found.sessions === 1 && !found.more ? "" : "s"
      }`;
      return [`hint: searching ${SUGGESTION_FLAGS[k]} finds ${n}`];
    }),
  ];
}

/** One hit's snippet masked, its ranges (record offsets) moved onto the masked snippet. */
function maskHit(h: SearchGroup["hits"][number]): SearchGroup["hits"][number] {
  const off = h.snippet_offset_bytes;
  const rel = h.ranges.map(([a, b]): [number, number] => [a - off, b - off]);
  const m = maskWithRanges(h.snippet, rel);
  if (m.spans.length === 0) return h;
  return { ...h, snippet: m.text, ranges: m.ranges.map(([a, b]) => [a + off, b + off]) };
}

/**
 * A team page with every group masked but, when `unmaskOwn`, those of `ownMachine`. A
 * masked group is flagged `masked: true` in --json output: its ranges then index the
 * masked snippet (offset by snippet_offset_bytes), not the original text.
 */
export function maskForeignGroups<R extends SearchResponse>(
  res: R,
  o: { ownMachine: string; unmaskOwn: boolean },
): R {
  const groups = res.groups.map((g) => {
    const machine = (g as { machine?: unknown }).machine;
    if (o.unmaskOwn && machine === o.ownMachine) return g;
    return {
      ...g,
      title: g.title === null ? null : maskSecrets(g.title).text,
      project: g.project === null ? null : maskSecrets(g.project).text,
      hits: g.hits.map(maskHit),
      masked: true,
    };
  });
  return { ...res, groups };
}
