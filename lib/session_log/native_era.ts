/**
 * The native-era rules, in one place: how a session.jsonl written before the canonical
 * conversation lane (the "legacy" era) says what the user typed. The message-search
 * extractor, the transcript rebuild and the catalog (rows, spine index, locate) all read
 * legacy spines through these rules, so a hit found by search lands on the row the
 * catalog shows for it.
 * Era: a file with a `conversation_message_epoch` marker is legacy before the marker and
 * new after it; without a marker, one `conversation_message` row makes the whole file
 * new-era; a file with neither is legacy throughout.
 * Legacy user text comes from: the session_started task (`data.task`, else the event's
 * message, else — for the first session_started only — the meta's task), a delivered
 * steer (its text lives on the steer_requested line), and an `info` line
 * "Round N follow-up: <text>".
 */
import type { LogEvent } from "./events.ts";

/** The legacy follow-up's info line: round, then the user's text (may span lines). */
export const LEGACY_FOLLOW_UP = /^Round (\d+) follow-up: ([\s\S]*)$/;

/** The round and the user's text of a legacy follow-up info message, or null. */
export function legacyFollowUp(
  message: string | undefined | null,
): { round: number; text: string } | null {
  const m = message ? LEGACY_FOLLOW_UP.exec(message) : null;
  return m ? { round: Number(m[1]), text: m[2]! } : null;
}

/**
 * The user text a legacy session_started carries: `data.task`, else the event's message,
 * else (first session_started of the file only) the meta's task.
 */
export function legacyTaskText(
  ev: LogEvent,
  o: { firstStarted: boolean; metaTask: string | null },
): string | null {
  const d = (ev.data ?? {}) as Record<string, unknown>;
  if (typeof d.task === "string") return d.task;
  return ev.message ?? (o.firstStarted ? o.metaTask : null);
}

/** Where the era changes in a run of events: the epoch marker's index, and any canonical row. */
export function nativeEraOf(
  events: readonly { event: LogEvent }[],
): { epochAt: number; canonical: boolean } {
  return {
    epochAt: events.findIndex((e) => e.event.event === "conversation_message_epoch"),
    canonical: events.some((e) => e.event.event === "conversation_message"),
  };
}

/** Whether event `i` is read by the legacy rules, given {@link nativeEraOf}'s answer. */
export function isLegacyAt(era: { epochAt: number; canonical: boolean }, i: number): boolean {
  return era.epochAt >= 0 ? i < era.epochAt : !era.canonical;
}
