/**
 * Facts about native sessions for the listing, read cheaply and through contained reads
 * only: the meta (≤ 1 MiB), the last event time from a 64 KiB tail of session.jsonl
 * (falling back to its mtime: legacy events carry no ts_ms), and, only for the sessions
 * on the returned page and only when the index has no shard for them, a streamed scan
 * of the spine that counts message rows and finds the parent relationship. A session
 * directory without a valid meta still lists when it has a spine; one with neither is
 * not a session.
 */
import { join } from "node:path";
import { lineText, splitCompleteLines } from "../durable/mod.ts";
import { parseMeta, SESSION_JSONL, SESSION_META, type SessionMeta } from "../session_log/mod.ts";
import { nativeSessionIds } from "./resolve_key.ts";
import { openInside, readInside } from "./safe_fs.ts";

/** Listing facts of one native session. */
export interface NativeFacts {
  id: string;
  dir: string;
  meta: SessionMeta | null;
  updatedMs: number | null;
}

const META_MAX_BYTES = 1024 * 1024;
const TAIL_BYTES = 64 * 1024;
/** Largest spine the fallback count scans (bigger sessions are indexed anyway). */
const SCAN_MAX_BYTES = 256 * 1024 * 1024;
const SCAN_CHUNK_BYTES = 1024 * 1024;
/** Sessions read concurrently while listing. */
const CONCURRENCY = 16;

/** Runs `fn` over `items` with at most CONCURRENCY in flight, keeping order. */
export async function mapPool<T, R>(items: readonly T[], fn: (t: T) => Promise<R>): Promise<R[]> {
  const out = new Array<R>(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const i = next++;
      out[i] = await fn(items[i]!);
    }
  };
  await Promise.all(Array.from({ length: Math.min(CONCURRENCY, items.length) }, worker));
  return out;
}

/** Reads and validates session_meta.json through a contained read; null when unusable. */
export async function readMetaInside(dir: string): Promise<SessionMeta | null> {
  const r = await readInside(dir, SESSION_META, { maxBytes: META_MAX_BYTES });
  if (!r.ok || r.truncated) return null;
  const m = parseMeta(new TextDecoder().decode(r.bytes));
  return m.ok ? m.meta : null;
}

/**
 * The ts_ms of the last complete spine line that has one; the spine's mtime otherwise
 * (legacy events carry only a time of day). "missing" when there is no spine.
 */
export async function lastEventMs(dir: string): Promise<number | null | "missing"> {
  const opened = await openInside(dir, SESSION_JSONL);
  if (!opened.ok) return opened.reason === "missing" ? "missing" : null;
  const { file } = opened;
  try {
    const start = Math.max(0, file.size - TAIL_BYTES);
    const bytes = await file.read(start, file.size - start);
    const { lines } = splitCompleteLines(bytes);
    for (let i = lines.length - 1; i >= 0; i--) {
      const m = /"ts_ms":(\d{1,16})[,}]/.exec(lineText(bytes, lines[i]!));
      if (m) return Number(m[1]);
    }
    return Math.floor(file.mtimeMs);
  } finally {
    await file.close();
  }
}

/** Every native session under `logsDir` with its listing facts. */
export async function discoverNative(logsDir: string): Promise<NativeFacts[]> {
  const ids = await nativeSessionIds(logsDir);
  const facts = await mapPool(ids, async (id): Promise<NativeFacts | null> => {
    const dir = join(logsDir, id);
    const [meta, last] = await Promise.all([readMetaInside(dir), lastEventMs(dir)]);
    if (meta === null && last === "missing") return null;
    const updatedMs = last === "missing" ? meta?.created_at_ms ?? null : last;
    return { id, dir, meta, updatedMs };
  });
  return facts.filter((f): f is NativeFacts => f !== null);
}

const NEEDLES = {
  canonical: '"event":"conversation_message"',
  epoch: '"event":"conversation_message_epoch"',
  relationship: '"event":"session_relationship"',
};
const LEGACY = /"event":"(session_started|steer_delivered|model_response)"|Round \d+ follow-up: /;

/** Message rows and parent of a spine, counted the way the detail view renders them. */
export async function scanSpine(
  dir: string,
  id: string,
): Promise<{ messages: number; parent: string | null }> {
  const opened = await openInside(dir, SESSION_JSONL);
  if (!opened.ok) return { messages: 0, parent: null };
  const { file } = opened;
  let canonical = 0, legacyBeforeEpoch = 0, legacy = 0, epochSeen = false;
  let parent: string | null = null;
  try {
    let carry = new Uint8Array(0);
    for (let off = 0; off < Math.min(file.size, SCAN_MAX_BYTES); off += SCAN_CHUNK_BYTES) {
      const chunk = await file.read(off, SCAN_CHUNK_BYTES);
      const buf = new Uint8Array(carry.length + chunk.length);
      buf.set(carry);
      buf.set(chunk, carry.length);
      const { lines, consumedOffset } = splitCompleteLines(buf);
      for (const span of lines) {
        const text = lineText(buf, span);
        if (text.includes(NEEDLES.epoch)) epochSeen = true;
        else if (text.includes(NEEDLES.canonical)) canonical++;
        else if (text.includes(NEEDLES.relationship)) parent = parentOf(text, id) ?? parent;
        else if (LEGACY.test(text)) {
          legacy++;
          if (!epochSeen) legacyBeforeEpoch++;
        }
      }
      // A line longer than the chunk is carried whole only up to one chunk: skip the rest.
      carry = buf.subarray(consumedOffset).slice(-SCAN_CHUNK_BYTES);
    }
  } finally {
    await file.close();
  }
  const messages = epochSeen ? legacyBeforeEpoch + canonical : canonical > 0 ? canonical : legacy;
  return { messages, parent };
}

function parentOf(line: string, id: string): string | null {
  try {
    const d = (JSON.parse(line) as { data?: { child_id?: unknown; parent_id?: unknown } }).data;
    return d?.child_id === id && typeof d.parent_id === "string" ? d.parent_id : null;
  } catch {
    // A malformed line is data: it simply names no parent.
    return null;
  }
}
