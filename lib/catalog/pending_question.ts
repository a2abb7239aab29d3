/**
 * What a live native session is waiting on: its status phase (live or ended) and the
 * question it is blocked on. The runner creates `human_question` ({question_id,
 * question}, O_EXCL) when askHuman blocks and removes it once an answer is taken, so the
 * file's presence IS the pending state — but only while the session is live: a file a
 * crashed runner left behind in an ended session is not a question anyone will read.
 *
 * Invariants: the file is read through the contained reader (never a symlink, FIFO or
 * hardlink), at most PENDING_QUESTION_MAX_BYTES; the question text returned is capped at
 * ENTRY_TEXT_CAP_BYTES on a character boundary (`question_truncated`). The runner writes
 * the file in two steps (create, then write), so an empty or half-written file is "not
 * pending yet", never an error: the next refresh sees it whole.
 */
import { capText } from "../message_search/mod.ts";
import { HUMAN_QUESTION, type SessionMeta, type SessionStatus } from "../session_log/mod.ts";
import { readMetaInside } from "./native_facts.ts";
import { readInside } from "./safe_fs.ts";
import { ENTRY_TEXT_CAP_BYTES, type PendingQuestion } from "./types.ts";

/** Largest `human_question` file parsed whole (a longer one keeps only its id). */
export const PENDING_QUESTION_MAX_BYTES = 1024 * 1024;

/**
 * Live statuses still change (the dashboard follows them, control routes accept them);
 * ended ones never do. A Record, so a status added to SESSION_STATUSES must be placed.
 */
const PHASE: Record<SessionStatus, "live" | "ended"> = {
  running: "live",
  waiting: "live",
  completed: "ended",
  failed: "ended",
  interrupted: "ended",
};

/** True for a status that may still change (running, waiting). Unknown or null: false. */
export function isLiveStatus(status: string | null | undefined): boolean {
  return typeof status === "string" && Object.hasOwn(PHASE, status) &&
    PHASE[status as SessionStatus] === "live";
}

/** The session's status from its meta (contained read); null when the meta is unreadable. */
export async function readSessionStatus(dir: string): Promise<SessionStatus | null> {
  return (await readMetaInside(dir))?.status ?? null;
}

function parseQuestion(text: string): { id: string; question: string } | null {
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch {
    // Half-written by the runner (create, then write): not pending yet.
    return null;
  }
  const o = v as { question_id?: unknown; question?: unknown } | null;
  if (typeof o?.question_id !== "string" || typeof o.question !== "string") return null;
  return { id: o.question_id, question: o.question };
}

/** The runner writes question_id first; an oversized file still names its question. */
function idFromHead(head: string): string | null {
  const m = /^\{"question_id":("(?:[^"\\]|\\.){1,200}")/.exec(head);
  if (!m) return null;
  const id: unknown = JSON.parse(m[1]!);
  return typeof id === "string" ? id : null;
}

/**
 * The question the session in `dir` is blocked on, or null (nothing pending, the
 * session has ended, or the file is refused / not yet complete). `meta` is the caller's
 * read of the session meta, when it has one.
 */
export async function readPendingQuestion(
  dir: string,
  o: { meta?: SessionMeta | null } = {},
): Promise<PendingQuestion | null> {
  const status = o.meta !== undefined ? o.meta?.status ?? null : await readSessionStatus(dir);
  if (!isLiveStatus(status)) return null;
  const r = await readInside(dir, HUMAN_QUESTION, { maxBytes: PENDING_QUESTION_MAX_BYTES });
  if (!r.ok) return null;
  const text = new TextDecoder().decode(r.bytes);
  const askedMs = Math.floor(r.mtimeMs);
  if (r.truncated) {
    const id = idFromHead(text);
    return id === null
      ? null
      : { question_id: id, question: "", question_truncated: true, asked_ms: askedMs };
  }
  const q = parseQuestion(text);
  if (!q) return null;
  const capped = capText(q.question, ENTRY_TEXT_CAP_BYTES);
  return {
    question_id: q.id,
    question: capped.text,
    ...(capped.truncated ? { question_truncated: true } : {}),
    asked_ms: askedMs,
  };
}
