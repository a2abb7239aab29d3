/**
 * The `stages` phase: where a cold backfill's CPU goes, in ONE thread, so the worker
 * pool's ratio can be read against the work it has to do. Every unit of every source is
 * extracted (the production extractors over the corpus roots) and encoded exactly as a
 * worker does (encodeUnitSegment); then the encoder's own parts are timed again on the
 * same records: the fold, the TERMS dictionary, the Bloom filters and the summary. Times
 * are milliseconds of wall in one thread (the phase runs alone in its child process).
 * On 2 cores the backfill cannot beat (extract + encode) ÷ 2, so this bounds its ratio to
 * the bare parse before any pool or publish cost.
 */
import { buildExtractors, PARSER_VERSION, type SourceRoots } from "../lib/message_search/mod.ts";
import { encodeUnitSegment } from "../lib/message_search/pool/encode.ts";
import { fold } from "../lib/message_search/query/fold.ts";
import {
  BLOCK_TARGET_UNITS,
  buildBloom,
  buildSummary,
} from "../lib/message_search/query/trigram.ts";
import { buildTerms } from "../lib/message_search/store/segment_terms.ts";
import type { MessageRecord } from "../lib/message_search/mod.ts";

// deno-lint-ignore no-control-regex
const ASCII_RE = /^[\x00-\x7f]*$/;

/** One-thread stage times of a cold backfill over `roots` (see the header). */
export async function stages(roots: SourceRoots): Promise<Record<string, unknown>> {
  const extractMs: Record<string, number> = {};
  let encodeMs = 0;
  let records = 0;
  const kept: MessageRecord[][] = [];
  for (const ex of buildExtractors(roots)) {
    const d = await ex.discover();
    let spent = 0;
    for (const u of d.units) {
      let t = performance.now();
      const out = await ex.extract(u, null, { now: Date.now() });
      spent += performance.now() - t;
      if (out.kind !== "replace" && out.kind !== "append") continue;
      if (out.records.length === 0) continue;
      records += out.records.length;
      kept.push(out.records);
      t = performance.now();
      encodeUnitSegment({
        key: u.key,
        parserVersion: PARSER_VERSION,
        records: out.records,
        marks: out.marks,
      });
      encodeMs += performance.now() - t;
    }
    extractMs[ex.source] = spent;
  }
  // The encoder's parts, on the same records (blocks cut at the encoder's target size).
  const part = { fold: 0, terms: 0, bloom: 0, summary: 0 };
  for (const rs of kept) {
    let t = performance.now();
    const f = rs.map((r) => ASCII_RE.test(r.text) ? r.text.toLowerCase() : fold(r.text));
    part.fold += performance.now() - t;
    t = performance.now();
    buildTerms(f);
    part.terms += performance.now() - t;
    const joined = f.join("\u0000");
    const blocks: string[] = [];
    for (let i = 0; i < joined.length; i += BLOCK_TARGET_UNITS) {
      blocks.push(joined.slice(i, i + BLOCK_TARGET_UNITS));
    }
    t = performance.now();
    for (const b of blocks) buildBloom(b);
    part.bloom += performance.now() - t;
    t = performance.now();
    buildSummary(blocks);
    part.summary += performance.now() - t;
  }
  let extractTotal = 0;
  for (const v of Object.values(extractMs)) extractTotal += v;
  return {
    records,
    extractMs: extractTotal,
    extractBySource: extractMs,
    encodeMs,
    encodeParts: part,
  };
}
