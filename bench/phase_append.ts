/**
 * Incremental figure: append one user message to the largest session while the daemon's
 * freshness scheduler watches the corpus (the real file watch, scoped sweeps), then search
 * every POLL_MS until the message is found — searching never sweeps (issue 28), so the
 * figure is the watch → debounce → scoped sweep → publish path alone. Each append lands at
 * a random phase 0–1 s after the last one (a user types whenever). Bytes written per appended message = store bytes written by the sweeps
 * that picked the appends up (CountingFs), divided by the appends. The session file is
 * truncated back to its original size afterwards (the corpus stays reusable).
 */
import { join } from "node:path";
import {
  FreshnessScheduler,
  JOURNAL_MIN_BYTES,
  JOURNAL_ROOM_FACTOR,
  realWatchFs,
  watchTargetsOf,
} from "../lib/message_search/mod.ts";
import { appender, appendTarget, type Corpus } from "./corpus/mod.ts";
import { ioWriteBytes, rootsOf, sleep, stats, type Wired } from "./harness.ts";
import { Rng } from "./corpus/rng.ts";

const APPENDS = 24;
const POLL_MS = 20;
/** Appends for the amortized write figure (one sweep each, back to back). */
const WRITE_APPENDS = 160;

/** Options for {@link runAppends}. */
export interface AppendOptions {
  /**
   * Time append → searchable in this process. The bench measures it on the real daemon
   * over HTTP instead (phase_daemon.ts) and only wants the write figures here.
   * @default true
   */
  latency?: boolean;
}

/** Runs the appends; returns latency and write figures. */
export async function runAppends(c: Corpus, w: Wired, o: AppendOptions = {}) {
  const timed = (o.latency ?? true) ? APPENDS : 0;
  const target = appendTarget(c);
  const path = target.append.path;
  const st0 = await Deno.stat(path);
  const line = appender(target.append);
  const engine = w.engine();
  const rng = new Rng(99);
  const latency: number[] = [];
  const sweepMs: number[] = [];
  let storeBytes = 0;
  let breakdown: Record<string, number> = {};
  let ioBytes = 0;
  let appended = 0;
  let amortized = 0;
  let amortizedLines = 0;
  const watch = timed > 0
    ? new FreshnessScheduler({
      indexer: w.indexer,
      targets: () => Promise.resolve(watchTargetsOf(rootsOf(c))),
      fs: realWatchFs,
      onSwept: (r) => void (r.scope !== null && sweepMs.push(r.durationMs)),
    })
    : null;
  await watch?.start();
  await watch?.refresh();
  try {
    for (let i = 0; i < timed; i++) {
      await sleep(rng.int(1000));
      const word = `benchappend${i}q${rng.u32().toString(36)}`;
      const text = `Please also check ${word} before the release`;
      const bytes = new TextEncoder().encode(line(text, Date.now()));
      const written0 = w.fs.written;
      const io0 = ioWriteBytes();
      const t0 = performance.now();
      const f = await Deno.open(path, { append: true });
      await f.write(bytes);
      f.close();
      appended += bytes.length;
      for (;;) {
        const r = await engine.search({ q: word });
        if (r.groups.some((g) => g.session_key === target.key)) break;
        if (performance.now() - t0 > 30_000) throw new Error(`append ${i} never became searchable`);
        await sleep(POLL_MS);
      }
      latency.push(performance.now() - t0);
      storeBytes += w.fs.written - written0;
      ioBytes += ioWriteBytes() - io0 - bytes.length;
    }
    await watch?.stop();
    // Amortized writes: many more appends, each picked up by its own sweep (the worst
    // case: one message per publish), so compaction merges are included.
    const written0 = w.fs.written;
    const kinds0 = { ...w.fs.byKind };
    for (let i = 0; i < WRITE_APPENDS; i++) {
      const text = `Amortized append ${i} ${rng.u32().toString(36)}`;
      const bytes = new TextEncoder().encode(line(text, Date.now()));
      const f = await Deno.open(path, { append: true });
      await f.write(bytes);
      f.close();
      amortizedLines += bytes.length;
      await w.indexer.sweep();
    }
    amortized = Math.round((w.fs.written - written0) / WRITE_APPENDS);
    const per = (k: keyof typeof kinds0) => (w.fs.byKind[k] - kinds0[k]) / WRITE_APPENDS;
    // A snapshot compaction writes the snapshot once per (journal room / journal bytes per
    // append) appends — every few thousand here, so a 160-append window holds one or none
    // by luck. Amortize it over its real period instead of over the window.
    const snapBytes = (await Deno.stat(join(w.store.root, "manifest.json"))).size;
    const room = Math.max(JOURNAL_MIN_BYTES, JOURNAL_ROOM_FACTOR * snapBytes);
    breakdown = {
      journal: Math.round(per("journal")),
      generations: Math.round(per("generation")),
      snapshotInWindow: Math.round(per("snapshot")),
      snapshotBytes: snapBytes,
      journalRoom: room,
      snapshotAmortized: Math.round((snapBytes * per("journal")) / room),
    };
  } finally {
    await watch?.stop();
    await Deno.truncate(path, st0.size);
    await Deno.utime(path, st0.atime ?? new Date(), st0.mtime ?? new Date());
  }
  return {
    session: { key: target.key, bytes: target.bytes, messages: target.messages },
    appends: timed,
    appendedBytes: appended,
    /** Mean bytes of an appended line, over every append of the phase. */
    lineBytes: Math.round((appended + amortizedLines) / (timed + WRITE_APPENDS)),
    latencyMs: stats(latency),
    refreshSweepMs: stats(sweepMs),
    storeBytesPerAppend: timed ? Math.round(storeBytes / timed) : null,
    amortizedAppends: WRITE_APPENDS,
    amortizedStoreBytesPerAppend: amortized,
    perAppend: breakdown,
    cycleAmortizedBytesPerAppend: (breakdown.journal ?? 0) + (breakdown.generations ?? 0) +
      (breakdown.snapshotAmortized ?? 0),
    ioWriteBytesPerAppend: timed ? Math.round(Math.max(0, ioBytes) / timed) : null,
  };
}
