/**
 * An {@link Extractor} made of a discovery function and the source's entry-flow hooks: the
 * wrapper every file-based source used to write out by hand (`source`, `discover`, and an
 * `extract` that hands each unit to {@link runEntryFlow}). The flow object is built once
 * per extractor, so per-unit work stays in the hooks.
 * Errors: whatever `discover` and the hooks throw (the flow retries a CursorMismatchError
 * once; see entry_flow.ts).
 */
import type { Source } from "../../record.ts";
import { type EntryFlow, runEntryFlow } from "./entry_flow.ts";
import type { Discovery, Extractor } from "./types.ts";

/** What {@link flowExtractor} is built from. */
export interface FlowExtractorParts<S> {
  source: Source;
  /** Lists the source's units (bounded; a missing home is "not present"). */
  discover(): Promise<Discovery>;
  /** The source's hooks into the entry flow. */
  flow: EntryFlow<S>;
}

/** The extractor that discovers with `discover` and extracts every unit through `flow`. */
export function flowExtractor<S>(parts: FlowExtractorParts<S>): Extractor {
  const { source, flow } = parts;
  return {
    source,
    discover: () => parts.discover(),
    extract: (unit, prior, ctx) => runEntryFlow(unit, prior, { now: ctx.now, flow }),
  };
}
