/**
 * native_detail.ts correlateLegacy for the spine index: once a spine has an epoch marker
 * AND a cut, legacy message rows before the marker that have no seq take the one the
 * marker's [seq, role, hash16] mapping gives their text (each mapping entry used once, in
 * row order), as the extractor correlates them, so a later cut can flag them. Runs when
 * the condition first holds and again only if a twin later changed a pre-marker seq;
 * reads the lines (and, for assistant rows, the sidecar spans) of the pre-marker rows.
 */
import { hash16Of, RECORD_TEXT_CAP_BYTES } from "../message_search/mod.ts";
import { NativeSpine } from "./native_page.ts";
import { readSpanText } from "./native_text.ts";
import type { SafeFile } from "./safe_fs.ts";
import type { SpineEntry } from "./spine_cache.ts";
import { KIND_MESSAGE } from "./spine_index.ts";

/** The epoch-mapped seqs of `entry`'s legacy rows, by physical row. */
export async function correlateLegacy(
  dir: string,
  file: SafeFile,
  entry: SpineEntry,
): Promise<Map<number, unknown>> {
  const idx = entry.index;
  // Seqs are read without an earlier mapping: this recomputes it from scratch.
  idx.corrSeq = new Map();
  const spine = new NativeSpine(dir, { file, refused: null, entry });
  const corr = new Map<number, unknown>();
  const marker = await spine.event(idx.epochEv);
  const raw = (marker?.data as { mapping?: unknown } | undefined)?.mapping;
  const mapping = Array.isArray(raw) ? raw.filter(Array.isArray) as unknown[][] : [];
  const markerLine = idx.evLine.at(idx.epochEv);
  for (let p = 0; p < idx.physicalRows && idx.lineOf(p) < markerLine; p++) {
    if (idx.rowKind.at(p) !== KIND_MESSAGE || idx.isHidden(p)) continue;
    if (spine.seqOf(p) !== undefined) continue;
    const r = await spine.physicalRow(p, { tools: false });
    if (r.seq !== undefined || !r.role) continue;
    let text = r.text;
    if (text === undefined && r.span) {
      const read = await readSpanText(dir, r.span, RECORD_TEXT_CAP_BYTES + 4);
      text = read.ok ? read.text : undefined;
    }
    if (text === undefined) continue;
    const h = hash16Of(text);
    const at = mapping.findIndex(([, role, mh]) => role === r.role && mh === h);
    if (at >= 0) corr.set(p, mapping.splice(at, 1)[0]![0]);
  }
  return corr;
}
