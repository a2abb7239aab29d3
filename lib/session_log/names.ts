/**
 * Session naming across backends. Source strings collapse to the canonical ids (the
 * original five — intendant, codex, claude-code, kimi, pi — and the seven of issue 17, in
 * message_search record.ts SOURCES order, so a persisted backend or a name overlay of any
 * indexed source is accepted); names lose control characters, escape
 * sequences and bidi overrides (lib/text stripControls), are whitespace-collapsed and cut
 * at 180 characters (code points, never splitting a surrogate pair) on write AND read, so
 * a hand-edited file cannot smuggle an unbounded or terminal-driving name into a listing.
 * Native names live in each session's session_meta.json; external names in one overlay file,
 * `<state-root>/session_names.json` = { source: { session_id: name } }, written atomically.
 */
import { readContained, writeFileAtomic } from "../durable/mod.ts";
import { stripControls } from "../text/mod.ts";

export const CANONICAL_SOURCES = [
  "intendant",
  "codex",
  "claude-code",
  "kimi",
  "pi",
  "gemini",
  "qwen",
  "copilot",
  "cursor",
  "droid",
  "opencode",
  "goose",
] as const;
export type Source = (typeof CANONICAL_SOURCES)[number];

/** Longest name kept, in characters (code points). */
export const NAME_MAX_CHARS = 180;

const ALIASES: Record<string, Source> = {
  intendant: "intendant",
  native: "intendant",
  codex: "codex",
  "openai codex": "codex",
  "codex cli": "codex",
  "claude code": "claude-code",
  claude: "claude-code",
  cc: "claude-code",
  "kimi code": "kimi",
  kimi: "kimi",
  "kimi cli": "kimi",
  pi: "pi",
  "pi coding agent": "pi",
  "pi agent": "pi",
  gemini: "gemini",
  "gemini cli": "gemini",
  qwen: "qwen",
  "qwen code": "qwen",
  copilot: "copilot",
  "copilot cli": "copilot",
  "github copilot": "copilot",
  "github copilot cli": "copilot",
  cursor: "cursor",
  "cursor cli": "cursor",
  "cursor agent": "cursor",
  droid: "droid",
  "factory droid": "droid",
  factory: "droid",
  opencode: "opencode",
  "open code": "opencode",
  goose: "goose",
};

/** Maps a free-form source string to its canonical name, or null when unknown. */
export function normalizeSource(raw: string): Source | null {
  const key = raw.trim().toLowerCase().replace(/[\s_-]+/g, " ");
  return ALIASES[key] ?? null;
}

/**
 * Strips controls and bidi overrides, collapses whitespace, trims, cuts at NAME_MAX_CHARS
 * characters; empty becomes null.
 */
export function normalizeName(raw: string | null | undefined): string | null {
  if (raw === null || raw === undefined) return null;
  // Strip first, then collapse: "a \x1b[2J b" becomes "a b", not "a  b".
  const collapsed = stripControls(raw).replace(/\s+/gu, " ").trim();
  if (collapsed.length === 0) return null;
  const chars = Array.from(collapsed);
  return chars.length <= NAME_MAX_CHARS
    ? collapsed
    : chars.slice(0, NAME_MAX_CHARS).join("").trimEnd();
}

/** An overlay file larger than this is not ours (a real one is a few KiB). */
export const OVERLAY_MAX_BYTES = 4 * 1024 * 1024;

/**
 * The overlay's text, or null when the name does not hold a plain regular file of sane
 * size: a planted symlink, FIFO or hard link is ignored (never read through, even under
 * the locked profile's scoped --allow-read, and never waited on), an oversized file too;
 * the next rename replaces it whole. Only the final component is checked (the state root
 * itself may be a symlink the user made).
 */
async function readOverlayText(path: string): Promise<string | null> {
  const r = await readContained(path, { maxBytes: OVERLAY_MAX_BYTES, hardlinks: "refuse" });
  return r.ok ? new TextDecoder().decode(r.bytes) : null;
}

/** The overlay file's shape: source → session id → name. */
export type NameOverlays = Partial<Record<Source, Record<string, string>>>;

/** Reads the overlay file; missing → empty. Invalid entries are dropped, names normalized. */
export async function readNameOverlays(path: string): Promise<NameOverlays> {
  let raw: unknown;
  try {
    const text = await readOverlayText(path);
    if (text === null) return {};
    raw = JSON.parse(text);
  } catch (err) {
    if (err instanceof Deno.errors.NotFound) return {};
    if (err instanceof SyntaxError) return {};
    throw err;
  }
  const out: NameOverlays = {};
  if (raw === null || typeof raw !== "object") return out;
  for (const [src, map] of Object.entries(raw as Record<string, unknown>)) {
    const source = normalizeSource(src);
    if (!source || map === null || typeof map !== "object") continue;
    const names: Record<string, string> = out[source] ?? {};
    for (const [id, name] of Object.entries(map as Record<string, unknown>)) {
      const n = typeof name === "string" ? normalizeName(name) : null;
      if (n) names[id] = n;
    }
    out[source] = names;
  }
  return out;
}

/** Sets (or with null, clears) an external session's overlay name. Returns the stored name. */
export async function setOverlayName(
  path: string,
  d: { source: string; sessionId: string; name: string | null },
): Promise<string | null> {
  const source = normalizeSource(d.source);
  if (!source) throw new RangeError(`Unknown session source "${d.source}"`);
  const overlays = await readNameOverlays(path);
  const names = overlays[source] ?? {};
  const name = normalizeName(d.name);
  if (name) names[d.sessionId] = name;
  else delete names[d.sessionId];
  overlays[source] = names;
  await writeFileAtomic(path, JSON.stringify(overlays, null, 2) + "\n");
  return name;
}

/** A listed session the overlay can name. */
export interface Nameable {
  source: string;
  session_id: string;
  resume_id?: string | null;
  name?: string | null;
}

/** Returns the items with overlay names applied (matching session_id or resume_id). */
export function applyNameOverlays<T extends Nameable>(items: T[], overlays: NameOverlays): T[] {
  return items.map((item) => {
    const source = normalizeSource(item.source);
    const names = source ? overlays[source] : undefined;
    const hit = names?.[item.session_id] ?? (item.resume_id ? names?.[item.resume_id] : undefined);
    if (hit) return { ...item, name: hit };
    return item.name === undefined ? item : { ...item, name: normalizeName(item.name) };
  });
}
