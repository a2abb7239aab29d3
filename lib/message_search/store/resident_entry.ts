/**
 * A manifest entry in its resident form (issue 16: the manifest dominated the daemon's
 * idle heap). Measured on the bench store (1,700 sessions, 8.4 MiB of live heap as plain
 * objects): the extractor `state` was 58 % of it (a Claude session's DAG window is ≈ 70
 * small arrays of uuid strings: ≈ 6.5 KB as objects, 3.4 KB as text), yet a sweep reads
 * a session's state only when one of its files changed. So a ResidentEntry keeps `state`
 * as its JSON text and parses it on each access (each access returns a fresh value, which
 * the caller may keep and even mutate); every other field is an ordinary own property.
 * The cursors stay objects on purpose: every sweep reads every entry's cursors, and
 * parsing them per sweep cost 5–12 ms for 0.3 MiB saved.
 *
 * Invariants:
 *  - built only from an entry that passed ManifestEntrySchema (or checkManifestEntry,
 *    its zod-free equal in manifest_check.ts); the text is
 *    JSON.stringify of its state (characters above U+00FF escaped when that keeps the
 *    text one byte per character, compactJson), so `state` returns a value deep-equal
 *    to it;
 *  - every field the entry had, state aside, is copied as is (a field added to the
 *    schema later needs no change here);
 *  - the text lives under an enumerable symbol key: invisible to Object.keys, JSON and
 *    zod, compared by assert.deepStrictEqual (two residents are deep-equal iff their
 *    entries are, key order within the state aside);
 *  - JSON.stringify(resident) gives the entry's JSON (toJSON); entryJson() gives the same
 *    text without materializing the state (snapshot writes).
 * Code that rebuilds an entry field by field (json_patch, object spreads) must start from
 * plainEntry(): a spread copies own properties, and `state` is a getter.
 */
import type { ManifestEntry } from "./types.ts";

const STATE = Symbol("state_json");

type Fields = Record<string | symbol, unknown>;

/** See the module header. */
export class ResidentEntry {
  declare readonly source: ManifestEntry["source"];
  declare readonly session_id: string;
  declare readonly generations: string[];
  declare readonly records: number;
  declare readonly newest_ts_ms: number;
  declare readonly oldest_ts_ms: number;
  declare readonly source_watermark: number;
  declare readonly source_fingerprint: string;
  declare readonly source_gone: boolean;
  declare readonly meta: ManifestEntry["meta"];
  declare readonly skipped: Record<string, number>;
  declare readonly published_at_ms: number;
  declare readonly quarantined_at_ms?: number;
  declare readonly cursors: ManifestEntry["cursors"];
  /** undefined when the entry had no state at all (JSON cannot say undefined). */
  declare readonly [STATE]: string | undefined;

  /**
   * `strings` (optional, shared by the entries of one read) interns the meta's project
   * paths, which many sessions share; the meta's file paths are shared with the cursors'
   * keys, the same paths (≈ 0.25 MiB of the bench store's 1,700 entries).
   */
  constructor(e: ManifestEntry, strings?: Map<string, string>) {
    const self = this as unknown as Fields;
    for (const k of Object.keys(e)) if (k !== "state") self[k] = (e as unknown as Fields)[k];
    self[STATE] = e.state === undefined ? undefined : compactJson(e.state);
    const meta = e.meta as ManifestEntry["meta"] | undefined;
    if (meta && Array.isArray(meta.files) && e.cursors && typeof e.cursors === "object") {
      const keys = new Map(Object.keys(e.cursors).map((k) => [k, k]));
      const project = meta.project;
      self.meta = {
        ...meta,
        project: typeof project === "string" ? intern(strings, project) : project,
        files: meta.files.map((f) => keys.get(f) ?? f),
      };
    }
  }

  /** The extractor's state, parsed now. */
  get state(): unknown {
    const t = this[STATE];
    return t === undefined ? undefined : JSON.parse(t);
  }

  toJSON(): ManifestEntry {
    return plainEntry(this);
  }
}

function intern(strings: Map<string, string> | undefined, s: string): string {
  if (!strings) return s;
  const have = strings.get(s);
  if (have !== undefined) return have;
  strings.set(s, s);
  return s;
}

/** Characters a one-byte V8 string cannot hold (it holds Latin-1). */
const WIDE = /[\u0100-\uffff]/g;

/**
 * JSON.stringify(value) in the smaller of V8's two string forms. One character above
 * U+00FF (a CJK title) makes V8 store the whole text two bytes per character; written
 * as a \uXXXX escape it costs 6 one-byte characters instead, so a text with fewer than
 * one such character in five is smaller escaped (JSON.parse reads both alike).
 */
export function compactJson(value: unknown): string {
  const text = JSON.stringify(value);
  let wide = 0;
  for (WIDE.lastIndex = 0; WIDE.test(text);) wide++;
  if (wide === 0 || 5 * wide >= text.length) return text;
  const escaped = text.replace(WIDE, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`);
  // replace() keeps its subject's two-byte form even when every character now fits one
  // byte (measured: 8.1 KB for a 4 K-character text); a string decoded from ASCII bytes
  // is one-byte (4.1 KB).
  return ASCII.decode(UTF8.encode(escaped));
}

const UTF8 = new TextEncoder();
const ASCII = new TextDecoder();

/** `e` as the resident form (itself when it already is). */
export function residentEntry(e: ManifestEntry): ManifestEntry {
  return e instanceof ResidentEntry ? e : new ResidentEntry(e) as unknown as ManifestEntry;
}

/** `e` as a plain object whose every field is an own property (itself when it is plain). */
export function plainEntry(e: ManifestEntry | ResidentEntry): ManifestEntry {
  if (!(e instanceof ResidentEntry)) return e;
  const out: Fields = {};
  for (const k of Object.keys(e)) out[k] = (e as unknown as Fields)[k];
  const state = e.state;
  if (state !== undefined) out.state = state;
  return out as unknown as ManifestEntry;
}

/** JSON.stringify(e), splicing a resident's state text in instead of parsing it. */
export function entryJson(e: ManifestEntry | ResidentEntry): string {
  if (!(e instanceof ResidentEntry)) return JSON.stringify(e);
  const fields: Fields = {};
  for (const k of Object.keys(e)) fields[k] = (e as unknown as Fields)[k];
  const head = JSON.stringify(fields);
  const state = e[STATE];
  if (state === undefined) return head;
  return head === "{}" ? `{"state":${state}}` : `${head.slice(0, -1)},"state":${state}}`;
}

/** Makes every entry of `sessions` resident, in place. */
export function makeResident(
  sessions: Record<string, ManifestEntry>,
  keys?: Iterable<string>,
): void {
  for (const k of keys ?? Object.keys(sessions)) {
    const e = sessions[k];
    if (e !== undefined && !(e instanceof ResidentEntry)) setEntry(sessions, k, residentEntry(e));
  }
}

/** sessions[key] = entry, as an own property even for the key "__proto__". */
export function setEntry(
  sessions: Record<string, ManifestEntry>,
  key: string,
  entry: ManifestEntry,
): void {
  if (key === "__proto__") {
    Object.defineProperty(sessions, key, {
      value: entry,
      enumerable: true,
      writable: true,
      configurable: true,
    });
  } else sessions[key] = entry;
}
