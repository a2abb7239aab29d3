/**
 * The Codex rollout line interpreter: one RolloutLine (`{timestamp, type, payload}`,
 * FORMAT.md §2) at a time into records and marks, carrying a small state between
 * incremental reads. Lanes (FORMAT.md §3):
 * - user prose = `event_msg` / `user_message`.message ONLY, skipped when `kind` is
 *   present and not "plain" (Sep–Oct 2025 injections). Codex twins every real prompt
 *   with a user-role `response_item`; the event is canonical, and skipping that lane
 *   wholesale also drops the machine injections that ride it with no event twin
 *   (AGENTS.md, <environment_context>, <turn_aborted>, …);
 * - assistant prose = `response_item` message, role "assistant": its non-empty
 *   `output_text` parts joined with "\n" (Codex's own content_items_to_text);
 * - never: developer/system roles, reasoning, tools, `agent_message` and
 *   `task_complete.last_agent_message` twins, `compacted` (summary and
 *   replacement_history copies), session_meta instructions, turn_context.
 * Turns: each real user_message opens the next user turn (0-based, per generation);
 * records before the first have no turn and no rollback can drop them.
 * `thread_rolled_back {num_turns}` (or app-server's `numTurns`) becomes a TurnCount
 * mark; a rollback naming an anchor item (`item_id` or `anchor_item_id`, not seen
 * upstream yet [unc]) becomes an ItemAnchor mark instead.
 * Record ids: the response_item id when present, else `L<line>` (stable for an
 * append-only file), prefixed `g<N>:` from generation 1 on (a restore re-mints the same
 * ids next to the kept records) and suffixed `@L<line>` when an id repeats in one pass.
 * Forks that copy the parent's history (older Codex) are indexed as written: the copies
 * are the child thread's own history; only the FIRST session_meta (the file's own) sets
 * project and parent. Malformed lines are counted, never thrown.
 */
import { z } from "zod";
import { capText, type MessageRecord, type SupersessionMark } from "../../record.ts";
import { hash16Of, type Locator } from "../../locator.ts";
import { ContentMarkSchema, type RolloutLine } from "./codex_source.ts";
import { countSkip } from "../framework/plugin.ts";

/** Longest meta title, in characters. */
export const TITLE_MAX_CHARS = 100;
/** Longest item id used as a record id / locator record_id (the locator schema cap). */
const ITEM_ID_MAX = 512;
/** Longest parent thread id kept (UUIDs are 36). */
const ID_MAX = 256;
/** Longest cwd kept as the project (PATH_MAX on Linux). */
const PROJECT_MAX_CHARS = 4096;

export const CodexStateSchema = z.object({
  v: z.literal(1),
  /** Rewrite generation of the records being produced. */
  generation: z.number().int().nonnegative(),
  /** Current user turn of this generation; -1 before the first user message. */
  turn: z.number().int().min(-1),
  /** Last valid line timestamp: the fallback for a line without one. */
  last_ts: z.number().int(),
  /** The first session_meta (the file's own) has been read. */
  meta_seen: z.boolean(),
  project: z.string().nullable(),
  parent: z.string().nullable(),
  title: z.string().nullable(),
  /** Where the next read resumes, over decompressed content. */
  content: ContentMarkSchema.nullable(),
});
/** Persisted between incremental reads: fixed size. */
export type CodexState = z.infer<typeof CodexStateSchema>;

/** A fresh state for generation `generation`. */
export function newCodexState(generation: number): CodexState {
  return {
    v: 1,
    generation,
    turn: -1,
    last_ts: 0,
    meta_seen: false,
    project: null,
    parent: null,
    title: null,
    content: null,
  };
}

/** One pass over a run of lines. */
export interface LinePass {
  sessionId: string;
  /** Rollout path relative to its home (locator `file`). */
  file: string;
  state: CodexState;
  records: MessageRecord[];
  marks: SupersessionMark[];
  nextOrder: number;
  skipped: Record<string, number>;
  /** Ids minted in this pass (a repeated item id gets a line suffix). */
  ids: Set<string>;
}

/** Starts a pass continuing at `nextOrder`. */
export function newLinePass(
  d: { sessionId: string; file: string; state: CodexState; nextOrder: number },
): LinePass {
  return { ...d, records: [], marks: [], skipped: {}, ids: new Set() };
}

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === "object" && v !== null && !Array.isArray(v);
const str = (v: unknown): string | null => (typeof v === "string" && v.length > 0 ? v : null);
/** A string no longer than `max` (state stays small even for a hostile session_meta). */
const bounded = (v: unknown, max: number) => {
  const s = str(v);
  return s !== null && s.length <= max ? s : null;
};

/** Interprets every line, in order. */
export function interpretLines(p: LinePass, lines: readonly RolloutLine[]): void {
  for (const l of lines) interpretLine(p, l.text, l.lineNo);
}

/** Interprets one line (without its "\n"). */
export function interpretLine(p: LinePass, text: string, lineNo: number): void {
  if (text.trim().length === 0) return; // a blank line carries nothing: not malformed
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch {
    // Not JSON (torn fragment repaired mid-file, invalid UTF-8 decoded lossily): data.
    countSkip(p.skipped, "malformed_line");
    return;
  }
  if (!isObj(raw) || typeof raw.type !== "string") {
    countSkip(p.skipped, "malformed_line");
    return;
  }
  const ts = typeof raw.timestamp === "string" ? Date.parse(raw.timestamp) : NaN;
  if (Number.isFinite(ts)) p.state.last_ts = ts;
  const payload = raw.payload;
  const type = raw.type;
  if (type !== "session_meta" && type !== "event_msg" && type !== "response_item") return;
  if (!isObj(payload)) {
    countSkip(p.skipped, "bad_payload");
    return;
  }
  if (raw.type === "session_meta") sessionMeta(p, payload);
  else if (raw.type === "event_msg") eventMsg(p, payload, lineNo);
  else if (payload.type === "message" && payload.role === "assistant") {
    assistant(p, payload, lineNo);
  }
}

/** Only the first session_meta is the file's own: forks copy the parent's after it. */
function sessionMeta(p: LinePass, m: Obj): void {
  if (p.state.meta_seen) return;
  p.state.meta_seen = true;
  p.state.project = bounded(m.cwd, PROJECT_MAX_CHARS);
  const src = isObj(m.source) ? (m.source.subagent ?? m.source.sub_agent) : undefined;
  const spawn = isObj(src) && isObj(src.thread_spawn) ? src.thread_spawn : {};
  p.state.parent = bounded(m.parent_thread_id, ID_MAX) ?? bounded(spawn.parent_thread_id, ID_MAX) ??
    bounded(m.forked_from_id, ID_MAX);
}

function eventMsg(p: LinePass, e: Obj, lineNo: number): void {
  if (e.type === "user_message") {
    if (e.kind !== undefined && e.kind !== "plain") return; // an injection, by design
    if (typeof e.message !== "string") return countSkip(p.skipped, "bad_user_message");
    p.state.turn++;
    if (e.message.trim().length === 0) return; // images only: a turn, but no prose
    if (p.state.title === null) p.state.title = titleOf(e.message);
    push(p, "user", e.message, null, lineNo);
  } else if (e.type === "thread_rolled_back") {
    const anchor = str(e.item_id) ?? str(e.anchor_item_id);
    const n = e.num_turns ?? e.numTurns;
    const generation = p.state.generation;
    if (anchor !== null) {
      p.marks.push({ kind: "item_anchor", after_order: p.nextOrder, item_id: anchor, generation });
    } else if (typeof n === "number" && Number.isSafeInteger(n) && n >= 1) {
      p.marks.push({ kind: "turn_count", after_order: p.nextOrder, num_turns: n, generation });
    } else countSkip(p.skipped, "bad_rollback");
  }
}

function assistant(p: LinePass, m: Obj, lineNo: number): void {
  if (!Array.isArray(m.content)) return countSkip(p.skipped, "bad_assistant_message");
  const parts: string[] = [];
  for (const c of m.content) {
    if (isObj(c) && c.type === "output_text" && typeof c.text === "string" && c.text !== "") {
      parts.push(c.text);
    }
  }
  const text = parts.join("\n");
  if (text.trim().length === 0) return;
  const id = str(m.id);
  push(p, "assistant", text, id !== null && id.length <= ITEM_ID_MAX ? id : null, lineNo);
}

function push(
  p: LinePass,
  role: "user" | "assistant",
  text: string,
  itemId: string | null,
  lineNo: number,
): void {
  const capped = capText(text);
  const gen = p.state.generation;
  const hash = hash16Of(capped.text);
  // Generation-qualified: a restore re-mints the same item ids next to the old records.
  let id = `${gen > 0 ? `g${gen}:` : ""}${itemId ?? `L${lineNo}`}`;
  if (p.ids.has(id)) id = `${id}@L${lineNo}`;
  p.ids.add(id);
  const locator: Locator = itemId !== null
    ? { v: 1, kind: "external_record_id", record_id: itemId, file: p.file, hash }
    : { v: 1, kind: "external_line", file: p.file, generation: gen, line: lineNo, hash };
  p.records.push({
    id,
    source: "codex",
    session_id: p.sessionId,
    role,
    ts_ms: p.state.last_ts,
    text: capped.text,
    truncated: capped.truncated,
    locator,
    order: p.nextOrder++,
    ...(p.state.turn >= 0 ? { user_turn: p.state.turn } : {}),
    ...(itemId !== null ? { item_id: itemId } : {}),
    generation: gen,
    // Sub-agent and fork rollouts are their own threads (own units, meta.parent_session_id
    // names the parent), so nothing here is tagged subagent: that flag means "produced by
    // a sub-agent INSIDE this session", which a Codex rollout never contains.
    subagent: false,
  });
}

/** First user prose as a one-line title, at most TITLE_MAX_CHARS characters. */
function titleOf(text: string): string {
  const flat = text.replace(/\s+/g, " ").trim();
  const chars = Array.from(flat);
  return chars.length <= TITLE_MAX_CHARS
    ? flat
    : `${chars.slice(0, TITLE_MAX_CHARS - 1).join("")}…`;
}
