/**
 * The sources the index knows, in display order, with their labels: read from the source
 * table (lib/message_search/source_table.ts, one row per source). That module imports
 * types and the import-free home rules only, so importing it does not pull the server's
 * schema code into the bundle
 * (which is why the UI does not go through lib/message_search/mod.ts here). Badge colours
 * come from the same rows: build.ts writes them into the page's stylesheet.
 */
import type { Source } from "../api_client.ts";
import { SOURCE_TABLE } from "../../lib/message_search/source_table.ts";

/** Human labels, in display order. */
export const SOURCE_LABEL: Record<Source, string> = Object.fromEntries(
  Object.values(SOURCE_TABLE).map((r) => [r.id, r.label]),
) as Record<Source, string>;

/** Every source, in display order. */
export const SOURCE_LIST = Object.keys(SOURCE_LABEL) as Source[];

/**
 * The source filter chips worth showing. Twelve chips of which a user runs two is noise,
 * and a chip for a source with no sessions filters to nothing; so, once coverage has
 * answered: the sources whose coverage counts at least one session, plus every chip that
 * is pressed (a filter from the URL stays visible, so it can be turned off). Before
 * coverage answers, and while it counts no session at all (a fresh index), every source
 * coverage lists (the wired ones and any the store holds), or all of them without an answer.
 */
export function chipSources(
  coverage: { sources: Partial<Record<Source, { sessions: number }>> } | null,
  pressed: readonly Source[],
): Source[] {
  if (!coverage) return SOURCE_LIST;
  const listed = SOURCE_LIST.filter((s) => coverage.sources[s] !== undefined);
  const withSessions = listed.filter((s) => (coverage.sources[s]?.sessions ?? 0) > 0);
  const base = withSessions.length > 0 ? withSessions : listed;
  return SOURCE_LIST.filter((s) => base.includes(s) || pressed.includes(s));
}
