/**
 * Jump-to-hit on an external session, against its current shard only (no other tool's
 * file is opened): external_record_id finds the records minted with that record id in
 * that file (Codex keeps earlier generations beside a restore, so several may match;
 * one whose text still hashes to the locator wins, an active one first);
 * external_line finds the record minted at that file + generation + line. The text
 * must still hash (hash16Of) to the locator's hash, else stale. A record gone from a
 * file the shard still reads is stale (rewritten or rolled back); a file the shard
 * never read, or native kinds, are unavailable.
 */
import { hash16Of, type Locator, type MessageRecord } from "../message_search/mod.ts";
import type { ExternalModel } from "./external_detail.ts";
import type { Anchor } from "./locate_native.ts";

function fileOf(rec: MessageRecord): string | null {
  const l = rec.locator;
  return l.kind === "external_record_id" || l.kind === "external_line" ? l.file : null;
}

/** Resolves an external-kind locator against `m`. */
export function locateExternal(m: ExternalModel, loc: Locator): Anchor {
  if (loc.kind !== "external_record_id" && loc.kind !== "external_line") {
    return {
      state: "unavailable",
      reason: `locator kind "${loc.kind}" does not apply to a ${m.entry.source} session`,
    };
  }
  const matches = (rec: MessageRecord): boolean => {
    const l = rec.locator;
    if (loc.kind === "external_record_id") {
      return l.kind === "external_record_id" && l.record_id === loc.record_id &&
        l.file === loc.file;
    }
    return l.kind === "external_line" && l.file === loc.file && l.generation === loc.generation &&
      l.line === loc.line;
  };
  const candidates: { row: number; active: boolean; ok: boolean }[] = [];
  m.rows.forEach((r, row) => {
    if (r.kind === "record" && matches(r.rec)) {
      candidates.push({ row, active: r.active, ok: hash16Of(r.rec.text) === loc.hash });
    }
  });
  const good = candidates.filter((c) => c.ok);
  const pick = good.find((c) => c.active) ?? good[0];
  if (pick) return { state: "resolved", row: pick.row, anchor: "exact" };
  if (candidates.length > 0) {
    return { state: "stale", reason: "content hash mismatch (the record was rewritten)" };
  }
  // Locator files are relative to the tool's home; the entry names absolute source paths.
  const fileKnown = m.rows.some((r) => r.kind === "record" && fileOf(r.rec) === loc.file) ||
    m.entry.meta.files.some((f) => f.endsWith(`/${loc.file}`));
  if (fileKnown) {
    return {
      state: "stale",
      reason: "the record is no longer in the session (rewritten or rolled back)",
    };
  }
  if (m.entry.source_gone) {
    return { state: "unavailable", reason: "the session's source files are gone" };
  }
  return { state: "unavailable", reason: "no record of this session comes from that file" };
}
