/**
 * transcript.jsonl: the human-skimmable conversation ({ts, role, text, tools_called?}).
 * Appended live, then rebuilt from session.jsonl at session end so it is complete even
 * when a live append was missed. The rebuild reads assistant text from the model.txt
 * spans the events reference (never a second copy), and for sessions written before the
 * message lane falls back to session_started tasks, follow-up info lines and steers.
 */
import { join } from "node:path";
import { writeFileAtomic } from "../durable/mod.ts";
import { readSessionSpan } from "./core.ts";
import { readMeta } from "./meta.ts";
import { legacyFollowUp } from "./native_era.ts";
import { TRANSCRIPT_JSONL } from "./paths.ts";
import { readSessionEvents } from "./read_events.ts";
import { createEpochInferrer } from "./time.ts";

/** One transcript line. */
export interface TranscriptEntry {
  ts: string;
  role: string;
  text: string;
  tools_called?: string[];
}

const decoder = new TextDecoder();

/** Derives the transcript entries from a session directory's spine. */
export async function buildTranscript(dir: string): Promise<TranscriptEntry[]> {
  const { events } = await readSessionEvents(dir);
  const meta = await readMeta(dir);
  const infer = meta.ok ? createEpochInferrer(meta.meta.created_at_ms) : null;
  const hasLane = events.some((e) => e.event.event === "conversation_message");
  const steerText = new Map<string, string>();
  const out: TranscriptEntry[] = [];
  let lastAssistantTurn: { turn: number | undefined; entry: TranscriptEntry } | null = null;
  for (const { event: ev } of events) {
    const ms = ev.ts_ms ?? infer?.infer(ev.ts) ?? null;
    const ts = ms !== null ? new Date(ms).toISOString() : ev.ts;
    const d = (ev.data ?? {}) as Record<string, unknown>;
    switch (ev.event) {
      case "conversation_message":
        if (d.role === "user" && typeof d.text === "string") {
          out.push({ ts, role: "user", text: d.text });
        }
        break;
      case "model_response": {
        const text = spanText(dir, ev.file, d);
        if (text === null) break;
        const entry: TranscriptEntry = { ts, role: "assistant", text };
        out.push(entry);
        lastAssistantTurn = { turn: ev.turn, entry };
        break;
      }
      case "agent_input":
        if (lastAssistantTurn && lastAssistantTurn.turn === ev.turn && Array.isArray(d.functions)) {
          lastAssistantTurn.entry.tools_called = d.functions.map(String);
        }
        break;
      case "voice_utterance":
        if (typeof d.text === "string") out.push({ ts, role: String(d.role), text: d.text });
        break;
      case "session_started":
        if (!hasLane && typeof d.task === "string") out.push({ ts, role: "user", text: d.task });
        break;
      case "steer_requested":
        if (typeof d.steer_id === "string" && typeof d.text === "string") {
          steerText.set(d.steer_id, d.text);
        }
        break;
      case "steer_delivered": {
        const text = typeof d.steer_id === "string" ? steerText.get(d.steer_id) : undefined;
        if (!hasLane && text !== undefined) out.push({ ts, role: "user", text });
        break;
      }
      case "info": {
        const f = hasLane ? null : legacyFollowUp(ev.message);
        if (f) out.push({ ts, role: "user", text: f.text });
        break;
      }
    }
  }
  return out;
}

function spanText(
  dir: string,
  file: string | undefined,
  d: Record<string, unknown>,
): string | null {
  if (!file || typeof d.model_offset !== "number" || typeof d.model_bytes !== "number") return null;
  try {
    return decoder.decode(readSessionSpan(dir, file, d.model_offset, d.model_bytes));
  } catch (err) {
    // A missing or refused sidecar loses one entry, not the transcript.
    if (err instanceof Error) return null;
    throw err;
  }
}

/** Rebuilds `<dir>/transcript.jsonl` atomically from session.jsonl. */
export async function rebuildTranscript(dir: string): Promise<number> {
  const entries = await buildTranscript(dir);
  await writeFileAtomic(
    join(dir, TRANSCRIPT_JSONL),
    entries.map((e) => JSON.stringify(e) + "\n").join(""),
  );
  return entries.length;
}
