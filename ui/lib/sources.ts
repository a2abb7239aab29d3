/**
 * The sources the index knows, in display order, with their labels: read from the source
 * table (lib/message_search/source_table.ts, one row per source). That module imports
 * types only, so importing it does not pull the server's schema code into the bundle
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
