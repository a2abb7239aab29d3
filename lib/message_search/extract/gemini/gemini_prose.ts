/**
 * Gemini CLI message records → prose. Pure: one MessageRecord value (as Gemini wrote it,
 * untrusted) in, the one searchable text (or null) out.
 *
 * Rules (FORMAT.md §1, [src] gemini-cli @5411f11 `utils/sessionUtils.ts`
 * `isIgnoredUserContent`, `core/geminiChat.ts`, `core/client.ts`,
 * `context/chatCompressionService.ts`):
 * - user: `displayContent` (the typed text) when present, else `content`; only `text`
 *   parts that are not `thought: true`. Never prose: a record carrying a
 *   `functionResponse` part (tool results are user-type records), text starting with
 *   `/` or `?` (slash commands, help), `<session_context>` (environment turn),
 *   `<hook_context>` (hook injection) or `<state_snapshot>` (compression summary), and
 *   the next-speaker nudge whose `content` is exactly "Please continue." (its
 *   displayContent repeats the PREVIOUS prompt, which would double-count it). Falling
 *   back to `content`, the `@`-file expansion block is cut.
 * - gemini: `content` string as is (already the non-thought text), or its non-thought
 *   `text` parts; the synthetic acks Gemini inserts are not prose.
 * - info / error / warning: UI notices, never prose. `thoughts`, `toolCalls`, `tokens`
 *   are never read.
 * Parts join with "" (Gemini's own partListUnionToString); whitespace-only text is none.
 * Errors: none thrown; a wrong-typed field makes the record non-prose or counts a skip.
 */

/** What the index keeps of one message record. */
export interface GeminiProse {
  role: "user" | "assistant";
  text: string;
  ts_ms: number;
}

type Obj = Record<string, unknown>;

/** The next-speaker nudge's model-bound text [src core/client.ts]. */
const CONTINUE_NUDGE = "Please continue.";
/** Synthetic model acknowledgements [src chatCompressionService.ts, geminiChat.ts]. */
const SYNTHETIC_ACKS = new Set([
  "Got it. Thanks for the additional context!",
  "Binary content received. Proceeding with analysis.",
]);
/** User text prefixes that are never prose (see the header). */
const IGNORED_USER_PREFIXES = ["/", "?", "<session_context>", "<hook_context>", "<state_snapshot>"];
const REF_START = "\n--- Content from referenced files ---";
const REF_END = "--- End of content ---";

export function isObj(v: unknown): v is Obj {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/** Non-thought text of a PartListUnion (string | Part | (string | Part)[]); null if none. */
export function partsText(content: unknown): string | null {
  if (typeof content === "string") return content;
  const parts = Array.isArray(content) ? content : isObj(content) ? [content] : null;
  if (parts === null) return null;
  let out = "";
  for (const p of parts) {
    if (typeof p === "string") out += p;
    else if (isObj(p) && typeof p.text === "string" && p.thought !== true) out += p.text;
  }
  return out;
}

function hasFunctionResponse(content: unknown): boolean {
  const parts = Array.isArray(content) ? content : [content];
  return parts.some((p) => isObj(p) && p.functionResponse !== undefined);
}

/** Cuts the `@`-file expansion block(s) out of model-bound user text. */
export function cutReferencedFiles(text: string): string {
  let out = text;
  for (let at = out.indexOf(REF_START); at >= 0; at = out.indexOf(REF_START)) {
    const end = out.indexOf(REF_END, at);
    out = out.slice(0, at) + (end < 0 ? "" : out.slice(end + REF_END.length));
  }
  return out;
}

/** ISO timestamp → epoch ms; null when absent or unparsable. */
export function tsOf(v: unknown): number | null {
  if (typeof v !== "string") return null;
  const ms = Date.parse(v);
  return Number.isSafeInteger(ms) ? ms : null;
}

function userText(msg: Obj): string | null {
  if (hasFunctionResponse(msg.content)) return null;
  const content = partsText(msg.content);
  if (content !== null && content.trim() === CONTINUE_NUDGE) return null;
  const hasDisplay = msg.displayContent !== undefined && msg.displayContent !== null;
  const raw = hasDisplay ? partsText(msg.displayContent) : content;
  if (raw === null) return null;
  const text = hasDisplay ? raw : cutReferencedFiles(raw);
  const trimmed = text.trim();
  if (IGNORED_USER_PREFIXES.some((p) => trimmed.startsWith(p))) return null;
  return text;
}

function modelText(msg: Obj): string | null {
  const text = partsText(msg.content);
  if (text === null || SYNTHETIC_ACKS.has(text.trim())) return null;
  return text;
}

/**
 * The prose of one message record, or null when it has none. `bad_timestamp` is counted
 * (and null returned) for a prose record whose time cannot be read.
 */
export function proseOf(msg: Obj, skipped: Record<string, number>): GeminiProse | null {
  let role: GeminiProse["role"];
  let text: string | null;
  if (msg.type === "user") [role, text] = ["user", userText(msg)];
  else if (msg.type === "gemini") [role, text] = ["assistant", modelText(msg)];
  else return null;
  if (text === null || text.trim().length === 0) return null;
  const ts = tsOf(msg.timestamp);
  if (ts === null) {
    skipped.bad_timestamp = (skipped.bad_timestamp ?? 0) + 1;
    return null;
  }
  return { role, text, ts_ms: ts };
}
