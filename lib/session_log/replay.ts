/**
 * The JSONL → outbound-entry inverse used by the dashboard: a `replay_start` marker with
 * the provider/model/autonomy scanned from the log, then one entry per line with its
 * original `ts` preserved. context_snapshot rows are replayed raw-less, and
 * `exact_replay_available` says whether their sidecar is still on disk (rotation deletes
 * all but the latest of a stream).
 * replaySession reads a whole log (the runner, tests); the daemon's replay route pages a
 * session through the catalog's spine index instead (lib/catalog native_replay.ts), with
 * the same toReplayEntries for the lines of each page, so no request holds a whole log.
 */
import { join } from "node:path";
import { type ReadEvent, readSessionEvents } from "./read_events.ts";

/** One replayed entry. */
export interface ReplayEntry {
  kind: string;
  ts: string;
  ts_ms: number | null;
  turn: number | null;
  line: number;
  level?: string;
  message?: string;
  data?: unknown;
  file?: string;
  file2?: string;
  exact_replay_available?: boolean;
}

/** The first entry: facts the oversight bar needs before any live event. */
export interface ReplayStart {
  kind: "replay_start";
  provider: string | null;
  model: string | null;
  autonomy: string | null;
  total: number;
}

/** Scans the events for the latest provider/model/autonomy. */
export function scanReplayStatus(events: ReadEvent[]): Omit<ReplayStart, "kind" | "total"> {
  let provider: string | null = null, model: string | null = null, autonomy: string | null = null;
  for (const { event } of events) {
    if (event.event !== "session_started") continue;
    const d = event.data as Record<string, unknown>;
    if (typeof d.provider === "string") provider = d.provider;
    if (typeof d.model === "string") model = d.model;
    if (typeof d.autonomy === "string") autonomy = d.autonomy;
  }
  return { provider, model, autonomy };
}

/** Converts read events to replay entries (context snapshots checked against disk). */
export function toReplayEntries(dir: string, events: ReadEvent[]): ReplayEntry[] {
  return events.map(({ event, lineNo }) => {
    const entry: ReplayEntry = {
      kind: event.event,
      ts: event.ts,
      ts_ms: event.ts_ms ?? null,
      turn: event.turn ?? null,
      line: lineNo,
    };
    if (event.level !== undefined) entry.level = event.level;
    if (event.message !== undefined) entry.message = event.message;
    if (event.data !== undefined) entry.data = event.data;
    if (event.file !== undefined) entry.file = event.file;
    if (event.file2 !== undefined) entry.file2 = event.file2;
    if (event.event === "context_snapshot") {
      entry.exact_replay_available = sidecarExists(dir, event.file);
    }
    return entry;
  });
}

function sidecarExists(dir: string, rel: string | undefined): boolean {
  if (!rel || rel.includes("..") || rel.startsWith("/")) return false;
  try {
    return Deno.lstatSync(join(dir, rel)).isFile;
  } catch (err) {
    if (err instanceof Deno.errors.NotFound) return false;
    throw err;
  }
}

/** Replays a whole session directory. */
export async function replaySession(
  dir: string,
): Promise<{ start: ReplayStart; entries: ReplayEntry[] }> {
  const { events } = await readSessionEvents(dir);
  const entries = toReplayEntries(dir, events);
  return {
    start: { kind: "replay_start", ...scanReplayStatus(events), total: entries.length },
    entries,
  };
}
