/**
 * Shared fixtures for the shard-store tests: a seeded PRNG, record/shard/update
 * builders that pass the real schemas, directory copying, and the reliability-plan
 * invariant checker (I1–I6) run after every crash.
 */
import { join } from "node:path";
import { parseTempName } from "../../lib/durable/mod.ts";
import { LockHeldError } from "../../lib/errors.ts";
import { hash16Of } from "../../lib/message_search/locator.ts";
import type { MessageRecord } from "../../lib/message_search/record.ts";
import {
  GENERATIONS_DIR,
  holdLock,
  type Manifest,
  MANIFEST_FILE,
  type ManifestEntry,
  openStore,
  parseManifestBytes,
  type ShardUpdate,
  type Store,
} from "../../lib/message_search/store/mod.ts";

/**
 * Runs `fn` with a fresh temp dir, removed afterwards. (Local twin of temp.ts's helper:
 * temp.ts pulls in the CLI's types, and through them the whole program; the store tests
 * stay independent of subsystems built on top of the store.)
 */
export async function withTempDir<T>(fn: (dir: string) => Promise<T> | T): Promise<T> {
  const dir = await Deno.makeTempDir({ prefix: "intendant-store-" });
  try {
    return await fn(dir);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

/** The parser version the tests publish with. */
export const PV = 3;

/** mulberry32: small, fast, seedable. */
export function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** One valid codex record. */
export function record(sessionId: string, order: number, o: { ts?: number; text?: string } = {}) {
  const text = o.text ?? `message ${order} of ${sessionId}`;
  const r: MessageRecord = {
    id: `${sessionId}-r${order}`,
    source: "codex",
    session_id: sessionId,
    role: order % 2 === 0 ? "user" : "assistant",
    ts_ms: o.ts ?? 1_700_000_000_000 + order * 1000,
    text,
    truncated: false,
    locator: {
      v: 1,
      kind: "external_record_id",
      record_id: `item-${order}`,
      file: "rollout.jsonl",
      hash: hash16Of(text),
    },
    order,
    generation: 0,
    subagent: false,
  };
  return r;
}

/** `n` records starting at `from`, optionally with text of `textLen` chars. */
export function records(
  sessionId: string,
  from: number,
  n: number,
  o: { ts?: number; textLen?: number } = {},
) {
  return Array.from({ length: n }, (_, i) =>
    record(sessionId, from + i, {
      ts: o.ts === undefined ? undefined : o.ts + i,
      text: o.textLen ? `${sessionId}:${from + i}:`.padEnd(o.textLen, "x") : undefined,
    }));
}

/** A plausible file cursor (bulk for the manifest). */
export function cursor(offset: number): ManifestEntry["cursors"][string] {
  return {
    dev: 2049,
    ino: 1000 + offset,
    size: offset,
    mtime_ms: 1_700_000_000_000,
    captured_at_ms: 1_700_000_000_000,
    prefix_len: Math.min(4096, offset),
    prefix_hash: hash16Of(`p${offset}`),
    offset,
    anchor_len: Math.min(4096, offset),
    anchor_hash: hash16Of(`a${offset}`),
    next_line: 1 + Math.floor(offset / 100),
    rewrite_epoch: 0,
  };
}

/** Options for {@link update}. */
export interface UpdateOptions {
  base?: string[] | null;
  recs?: MessageRecord[];
  watermark?: number;
  fingerprint?: string;
  files?: string[];
  skipped?: Record<string, number>;
}

/** A ShardUpdate for `codex:<sessionId>`. */
export function update(
  kind: ShardUpdate["kind"],
  sessionId: string,
  o: UpdateOptions = {},
): ShardUpdate {
  const files = o.files ?? ["rollout.jsonl"];
  const watermark = o.watermark ?? 100;
  return {
    kind,
    key: `codex:${sessionId}`,
    source: "codex",
    session_id: sessionId,
    base: o.base ?? null,
    segment: kind === "replace" || kind === "append"
      ? { records: o.recs ?? [], marks: [] }
      : undefined,
    cursors: Object.fromEntries(files.map((f) => [f, cursor(watermark)])),
    state: { n: watermark },
    source_watermark: watermark,
    source_fingerprint: o.fingerprint ?? "fp-1",
    meta: { project: "/p", title: `title ${sessionId}`, parent_session_id: null, files },
    skipped: o.skipped,
  };
}

/** Recursive copy of a store directory (regular files only). */
export async function copyDir(from: string, to: string): Promise<void> {
  await Deno.mkdir(to, { recursive: true, mode: 0o700 });
  for await (const e of Deno.readDir(from)) {
    const a = join(from, e.name);
    const b = join(to, e.name);
    if (e.isDirectory) await copyDir(a, b);
    else if (e.isFile) await Deno.copyFile(a, b);
  }
}

/** Temp files (writeFileAtomic naming) in the store root and generations/. */
export function listTemps(root: string): string[] {
  const out: string[] = [];
  for (const dir of [root, join(root, GENERATIONS_DIR)]) {
    try {
      for (const e of Deno.readDirSync(dir)) if (parseTempName(e.name)) out.push(join(dir, e.name));
    } catch (err) {
      if (!(err instanceof Deno.errors.NotFound)) throw err;
    }
  }
  return out;
}

/** Quarantine files in the store root. */
export function listQuarantine(root: string): string[] {
  return [...Deno.readDirSync(root)].map((e) => e.name).filter((n) =>
    n.startsWith("manifest.corrupt-")
  );
}

/** What the invariant checker found after one crash. */
export interface InvariantReport {
  /** I1: manifest.json existed but did not parse/validate before recovery. */
  unparsable: boolean;
  /** I1: quarantine files created by recovery. */
  quarantines: number;
  /** I2: referenced generations missing, hash-mismatched or unparsable. */
  badGenerations: number;
  /** I3: revision after recovery < last acknowledged revision. */
  revisionRegressed: boolean;
  /** I4: acknowledged keys missing after recovery. */
  lostAcks: number;
  /** Temps present before recovery (A16 "orphans before"). */
  tempsBefore: number;
  /** I5: temps left after openStore. */
  tempsAfterOpen: number;
  /** I6: the writer lock could be taken after recovery. */
  lockAcquirable: boolean;
  manifest: Manifest;
  /** manifest.json bytes before recovery (null when missing). */
  rawBefore: Uint8Array | null;
}

/** Opens the crashed store as the next daemon would and checks I1–I6. */
export async function checkInvariants(
  root: string,
  o: { lastAckRevision?: number; ackedKeys?: Iterable<string> } = {},
): Promise<InvariantReport> {
  let rawBefore: Uint8Array | null = null;
  try {
    rawBefore = await Deno.readFile(join(root, MANIFEST_FILE));
  } catch (err) {
    if (!(err instanceof Deno.errors.NotFound)) throw err;
  }
  const unparsable = rawBefore !== null && parseManifestBytes(rawBefore).kind !== "ok";
  const quarantinedBefore = listQuarantine(root).length;
  const tempsBefore = listTemps(root).length;
  const store = await openStore({ root, parserVersion: PV, windowDays: null, lockWaitMs: 2000 });
  const tempsAfterOpen = listTemps(root).length;
  const manifest = await store.readManifest();
  let badGenerations = 0;
  for (const entry of Object.values(manifest.sessions)) {
    for (const g of entry.generations) {
      await store.loadSegment(g).catch(() => badGenerations++);
    }
  }
  let lostAcks = 0;
  for (const k of o.ackedKeys ?? []) if (!Object.hasOwn(manifest.sessions, k)) lostAcks++;
  let lockAcquirable = false;
  try {
    (await holdLock(root, { wait: 2000 })).release();
    lockAcquirable = true;
  } catch (err) {
    if (!(err instanceof LockHeldError)) throw err;
  }
  return {
    unparsable,
    quarantines: listQuarantine(root).length - quarantinedBefore,
    badGenerations,
    revisionRegressed: manifest.revision < (o.lastAckRevision ?? 0),
    lostAcks,
    tempsBefore,
    tempsAfterOpen,
    lockAcquirable,
    manifest,
    rawBefore,
  };
}

/** True when any invariant failed. */
export function violated(r: InvariantReport): boolean {
  return r.unparsable || r.quarantines > 0 || r.badGenerations > 0 || r.revisionRegressed ||
    r.lostAcks > 0 || r.tempsAfterOpen > 0 || !r.lockAcquirable;
}

/** Keys the crash loops cycle through (replace and append both happen often). */
export const LOOP_KEYS = 12;

/**
 * A random publish against `m`: a replace (new key, or 30%) or an append on the entry's
 * current generations, 0–40 records of up to 2 KiB, 1–6 cursors, rising watermark.
 */
export function randomUpdate(rnd: () => number, m: Manifest): ShardUpdate {
  const sid = `s${Math.floor(rnd() * LOOP_KEYS)}`;
  const entry = m.sessions[`codex:${sid}`];
  const kind = !entry || rnd() < 0.3 ? "replace" : "append";
  const n = Math.floor(rnd() * 40);
  const from = kind === "append" ? entry!.records : 0;
  const files = Array.from({ length: 1 + Math.floor(rnd() * 6) }, (_, i) => `f${i}.jsonl`);
  return update(kind, sid, {
    base: entry?.generations ?? null,
    recs: records(sid, from, n, { ts: Date.now(), textLen: 1 + Math.floor(rnd() * 2048) }),
    watermark: (entry?.source_watermark ?? 0) + 1 + n,
    files: kind === "append" ? Object.keys(entry!.cursors) : files,
  });
}

/** An empty manifest at revision 0 (the naive control's starting point). */
export function emptyLike(): Manifest {
  return {
    schema: 1,
    parser_version: PV,
    revision: 0,
    updated_at_ms: 0,
    sessions: {},
    tombstones: {},
  };
}

/**
 * The A2 starting state: "codex:big" with 16 segments (the next append compacts) and
 * "codex:small" with one. Returns the manifest after setup.
 */
export async function prepareA2Base(store: Store): Promise<Manifest> {
  await store.publish([
    update("replace", "big", { recs: records("big", 0, 2, { ts: 1_000 }) }),
    update("replace", "small", { recs: records("small", 0, 2, { ts: 1_000 }) }),
  ]);
  for (let i = 1; i < 16; i++) {
    const base = (await store.readManifest()).sessions["codex:big"]!.generations;
    await store.publish([
      update("append", "big", {
        base,
        recs: records("big", 2 * i, 2, { ts: 1_000 }),
        watermark: 100 + i,
      }),
    ]);
  }
  return await store.readManifest();
}

/** The A2 batch: an append that compacts, a replace of a new key, a touch. */
export function a2Batch(m: Manifest): ShardUpdate[] {
  const big = m.sessions["codex:big"]!;
  const small = m.sessions["codex:small"]!;
  return [
    update("append", "big", {
      base: big.generations,
      recs: records("big", big.records, 3, { ts: 2_000 }),
      watermark: 500,
    }),
    update("replace", "fresh", { recs: records("fresh", 0, 4, { ts: 2_000 }) }),
    update("touch", "small", { base: small.generations, watermark: 900 }),
  ];
}
