/**
 * The manifest journal's format, pure: encoding a publish as a delta line and replaying
 * lines over a snapshot. manifest.json is a snapshot; manifest.journal holds the publishes
 * since, one line each, so a publish writes the entries it changed instead of the whole
 * manifest (a 5 MiB manifest rewritten per appended message was issue 9's worst figure).
 *
 * Format (UTF-8, lines separated by "\n"):
 *   line 1  `{"journal":1,"snapshot":<revision>}` — the snapshot revision it extends;
 *   then    `<fnv1a32 hex8> <json>` per publish, json = {b, r, u, p, s, x?, t, g?}:
 *           b the revision it applies to, r the revision it makes, u updated_at_ms,
 *           p parser_version, s {key: entry|null}, x {key: patch of the entry}
 *           (json_patch.ts; used when smaller than the entry), t {key: ms|null},
 *           g {name: ms|null} (sessions, tombstones, retired; null deletes).
 * Blank lines are ignored and every append starts with "\n", so a torn tail left by a
 * crash is terminated by the next append instead of gluing onto its line.
 *
 * Replay invariants: a line applies iff its checksum and schema hold, b equals the
 * current revision, r > b and p equals the current parser_version. Any other line is
 * skipped and counted — a torn or zero-filled tail (power loss), a lockless writer's line
 * that lost a race (its update is re-derived by the next sweep) — and never hides a
 * valid later line, because each line stands alone. A journal whose header names another
 * revision than the snapshot is stale (crash between the snapshot's rename and the
 * journal's reset) and contributes nothing.
 */
import { z } from "zod";
import { applyPatch, diffJson, type Patch, PatchError } from "./json_patch.ts";
import { checkDelta, checkManifestEntry } from "./manifest_check.ts";
import { entryJson, plainEntry } from "./resident_entry.ts";
import { type Manifest, type ManifestEntry, ManifestEntrySchema } from "./types.ts";

export const JOURNAL_FILE = "manifest.journal";
export const JOURNAL_VERSION = 1;

/**
 * A delta line's shape: the definition, checked on replay by checkDelta (manifest_check.ts,
 * the same verdict and value without zod's cost in a cold process; its test holds this
 * schema as the oracle).
 */
export const DeltaSchema = z.object({
  b: z.number().int().nonnegative(),
  r: z.number().int().nonnegative(),
  u: z.number().int(),
  p: z.number().int().nonnegative(),
  s: z.record(z.string(), ManifestEntrySchema.nullable()),
  x: z.record(z.string(), z.unknown()).optional(),
  t: z.record(z.string(), z.number().int().nullable()),
  g: z.record(z.string(), z.number().int().nullable()).optional(),
});
export type Delta = z.infer<typeof DeltaSchema>;

/** The journal's first line (with its "\n") for a snapshot at `revision`. */
export function journalHeader(revision: number): string {
  return `{"journal":${JOURNAL_VERSION},"snapshot":${revision}}\n`;
}

/**
 * The line (without newlines) that turns `prev` into `next`, or null when a delta cannot
 * express it (a parser_version change rewrites everything: the caller snapshots).
 * Entries are compared by identity: a publish copies the sessions map and replaces the
 * entries it changes, so unchanged entries are the very same objects.
 */
export function encodeDelta(prev: Manifest, next: Manifest): string | null {
  if (prev.parser_version !== next.parser_version || next.schema !== prev.schema) return null;
  const delta: Delta = {
    b: prev.revision,
    r: next.revision,
    u: next.updated_at_ms,
    p: next.parser_version,
    s: changed(prev.sessions, next.sessions, (a, b) => a === b),
    t: changed(prev.tombstones, next.tombstones, (a, b) => a === b),
  };
  // An entry that existed before is written as a patch when that is smaller (it nearly
  // always is: an append changes counters, a cursor and a window of extractor state).
  const x: Record<string, Patch> = {};
  for (const [k, entry] of Object.entries(delta.s)) {
    if (entry === null || !Object.hasOwn(prev.sessions, k)) continue;
    // Plain copies: a resident entry's cursors and state are getters (resident_entry.ts).
    const patch = diffJson(plainEntry(prev.sessions[k]!), plainEntry(entry));
    if (patch === undefined || JSON.stringify(patch).length >= entryJson(entry).length) {
      continue;
    }
    x[k] = patch;
    delete delta.s[k];
  }
  if (Object.keys(x).length > 0) delta.x = x;
  const g = changed(prev.retired ?? {}, next.retired ?? {}, (a, b) => a === b);
  if (Object.keys(g).length > 0) delta.g = g;
  const json = JSON.stringify(delta);
  return `${fnv1a(json)} ${json}`;
}

function changed<T>(
  a: Record<string, T>,
  b: Record<string, T>,
  same: (x: T, y: T) => boolean,
): Record<string, T | null> {
  const out: Record<string, T | null> = {};
  for (const k of Object.keys(b)) if (!Object.hasOwn(a, k) || !same(a[k]!, b[k]!)) out[k] = b[k]!;
  for (const k of Object.keys(a)) if (!Object.hasOwn(b, k)) out[k] = null;
  return out;
}

/** What {@link replayJournal} made of the journal bytes from `from` on. */
export interface Replay {
  manifest: Manifest;
  /** Byte offset after the last complete line read (a later replay resumes here). */
  consumed: number;
  applied: number;
  /** Lines that failed the checksum, the schema or the revision chain. */
  skipped: number;
  /** Keys whose entry an applied line set (new or patched), in the order applied. */
  changed: string[];
}

/**
 * The revision named by the header line of `bytes`, or null when the first line is not
 * a complete, valid header.
 */
export function headerRevision(bytes: Uint8Array): { revision: number; length: number } | null {
  const nl = bytes.indexOf(0x0a);
  if (nl < 0 || nl > 200) return null;
  const text = new TextDecoder().decode(bytes.subarray(0, nl));
  const m = /^\{"journal":(\d+),"snapshot":(\d+)\}$/.exec(text);
  if (!m || Number(m[1]) !== JOURNAL_VERSION) return null;
  const revision = Number(m[2]);
  return Number.isSafeInteger(revision) ? { revision, length: nl + 1 } : null;
}

/**
 * Applies the complete lines of `bytes[from..]` to `base` (never mutated; the result
 * shares unchanged entries with it). `from` must be a line start after the header.
 */
export function replayJournal(base: Manifest, bytes: Uint8Array, from: number): Replay {
  const end = bytes.lastIndexOf(0x0a) + 1;
  if (end <= from) {
    return { manifest: base, consumed: Math.max(from, 0), applied: 0, skipped: 0, changed: [] };
  }
  // Non-fatal decoding: garbage (a zero-filled tail) must fail its line's checksum, not
  // the whole replay.
  const text = new TextDecoder().decode(bytes.subarray(from, end));
  let cur: Manifest | null = null;
  let applied = 0;
  let skipped = 0;
  const changed: string[] = [];
  for (const line of text.split("\n")) {
    if (line === "") continue;
    const d = parseLine(line);
    const m = cur ?? base;
    if (!d || d.b !== m.revision || d.r <= d.b || d.p !== m.parser_version) {
      skipped++;
      continue;
    }
    const patched = patchedEntries(m, d);
    if (patched === null) {
      skipped++;
      continue;
    }
    // Copy the maps once per replay, then apply in place: a cold replay of thousands of
    // lines must not copy 2,000 entries per line.
    cur ??= {
      ...base,
      sessions: { ...base.sessions },
      tombstones: { ...base.tombstones },
      retired: { ...base.retired },
    };
    applyDelta(cur, d, patched);
    for (const [k, v] of Object.entries(d.s)) if (v !== null) changed.push(k);
    for (const k of patched.keys()) changed.push(k);
    applied++;
  }
  const manifest = cur ?? base;
  if (cur && Object.keys(cur.retired ?? {}).length === 0) delete cur.retired;
  return { manifest, consumed: end, applied, skipped, changed };
}

function parseLine(line: string): Delta | null {
  const sp = line.indexOf(" ");
  if (sp !== 8) return null;
  const json = line.slice(9);
  if (fnv1a(json) !== line.slice(0, 8)) return null;
  let raw: unknown;
  try {
    raw = JSON.parse(json);
  } catch {
    return null;
  }
  // Map keys are assigned onto plain objects, where "__proto__" would set a prototype
  // instead of adding a key: such a line is hostile, never ours.
  if (hasProtoKey(raw)) return null;
  const checked = checkDelta(raw);
  return checked.ok ? checked.value : null;
}

function hasProtoKey(raw: unknown): boolean {
  if (raw === null || typeof raw !== "object") return false;
  const o = raw as Record<string, unknown>;
  return ["s", "x", "t", "g"].some((k) => {
    const map = o[k];
    return map !== null && typeof map === "object" && Object.hasOwn(map, "__proto__");
  });
}

/**
 * The entries `d.x` patches, applied to `m`'s and validated; null when any does not fit
 * (then the whole line is skipped: a line applies entirely or not at all).
 */
function patchedEntries(m: Manifest, d: Delta): Map<string, ManifestEntry> | null {
  const out = new Map<string, ManifestEntry>();
  for (const [k, patch] of Object.entries(d.x ?? {})) {
    if (!Object.hasOwn(m.sessions, k) || Object.hasOwn(d.s, k)) return null;
    let value: unknown;
    try {
      value = applyPatch(plainEntry(m.sessions[k]!), patch as Patch);
    } catch (err) {
      if (err instanceof PatchError) return null;
      throw err;
    }
    const checked = checkManifestEntry(value);
    if (!checked.ok) return null;
    out.set(k, checked.value);
  }
  return out;
}

function applyDelta(m: Manifest, d: Delta, patched: Map<string, ManifestEntry>): void {
  for (const [k, v] of Object.entries(d.s)) {
    if (v === null) delete m.sessions[k];
    else m.sessions[k] = v;
  }
  for (const [k, v] of patched) m.sessions[k] = v;
  for (const [k, v] of Object.entries(d.t)) {
    if (v === null) delete m.tombstones[k];
    else m.tombstones[k] = v;
  }
  const retired = m.retired!;
  for (const [k, v] of Object.entries(d.g ?? {})) {
    if (v === null) delete retired[k];
    else retired[k] = v;
  }
  m.revision = d.r;
  m.updated_at_ms = d.u;
}

/** FNV-1a 32 over UTF-16 code units, as 8 hex digits: catches torn and garbled lines. */
export function fnv1a(s: string): string {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 0x01000193);
  return (h >>> 0).toString(16).padStart(8, "0");
}
