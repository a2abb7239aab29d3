/**
 * Building ToolCallEntry values the same way for every source: the input is the command
 * line for shell tools (what a reader wants to see) and compact JSON of the arguments for
 * everything else, capped at TOOL_INPUT_CAP_BYTES; each output label holds the head of
 * the text, capped at EXCERPT_CAP_BYTES on a character boundary, with the whole text's
 * UTF-8 size. A status only ever moves pending → ok → error: a later "ok" signal (an
 * output item after a failing exec event) never hides an earlier failure.
 * Everything here reads untrusted JSON: shapes are checked, never assumed.
 */
import { utf8Length } from "../../text/mod.ts";
import { capText } from "../../message_search/mod.ts";
import { shellQuote } from "../resume.ts";
import {
  EXCERPT_CAP_BYTES,
  TOOL_INPUT_CAP_BYTES,
  type ToolCallEntry,
  type ToolOutput,
} from "../types.ts";

export type Obj = Record<string, unknown>;
export const isObj = (v: unknown): v is Obj =>
  typeof v === "object" && v !== null && !Array.isArray(v);
/** A non-empty string, else null. */
export const str = (v: unknown): string | null => typeof v === "string" && v.length > 0 ? v : null;
/** A finite number, else null. */
export const num = (v: unknown): number | null =>
  typeof v === "number" && Number.isFinite(v) ? v : null;
/** Epoch ms of an ISO timestamp, else null. */
export function isoMs(v: unknown): number | null {
  if (typeof v !== "string") return null;
  const t = Date.parse(v);
  return Number.isFinite(t) ? t : null;
}

/** Tool names whose arguments are a command line (compared lowercased). */
const SHELL_TOOLS = new Set([
  "bash",
  "shell",
  "exec",
  "exec_command",
  "shell_command",
  "local_shell",
  "run_shell_command",
  "powershell",
]);

/** A command vector as a reader would type it: `sh -c <script>` shows the script. */
export function argvLine(argv: readonly string[]): string {
  const shell = argv[0]?.split("/").at(-1) ?? "";
  if (argv.length === 3 && /^(ba|z|da)?sh$/.test(shell) && /^-l?c$/.test(argv[1]!)) {
    return argv[2]!;
  }
  return argv.map(shellQuote).join(" ");
}

const strArray = (v: unknown): string[] | null =>
  Array.isArray(v) && v.length > 0 && v.every((x) => typeof x === "string") ? v : null;

function commandOf(args: unknown): string | null {
  if (typeof args === "string") return args;
  if (!isObj(args)) return null;
  for (const k of ["command", "cmd"]) {
    const v = args[k];
    if (typeof v === "string") return v;
    const argv = strArray(v);
    if (argv) return argvLine(argv);
  }
  return null;
}

/** A fresh pending call. `args` is shown as the command line (shell tools) or compact JSON. */
export function newCall(name: string, args: unknown, ts: number | null): ToolCallEntry {
  const cmd = SHELL_TOOLS.has(name.toLowerCase()) ? commandOf(args) : null;
  const raw = cmd ?? (typeof args === "string" ? args : JSON.stringify(args ?? null) ?? "null");
  const c = capText(raw, TOOL_INPUT_CAP_BYTES);
  const call: ToolCallEntry = { name, input: c.text, ts_ms: ts, status: "pending", output: {} };
  if (c.truncated) call.input_truncated = true;
  return call;
}

/** The head of `text` as one output label. */
export function excerptOf(text: string): ToolOutput {
  const c = capText(text, EXCERPT_CAP_BYTES);
  return { excerpt: c.text, truncated: c.truncated, bytes: utf8Length(text) };
}

/** Sets output `label` of `call` to the head of `text`. */
export function putOutput(call: ToolCallEntry, label: string, text: string): void {
  call.output[label] = excerptOf(text);
}

/** Moves the status forward (pending → ok → error), never back. */
export function settle(call: ToolCallEntry, status: "ok" | "error"): void {
  if (call.status === "error") return;
  call.status = status;
}

/** Records an exit code; a non-zero one fails the call. */
export function exitWith(call: ToolCallEntry, code: number): void {
  call.exit_code = code;
  settle(call, code === 0 ? "ok" : "error");
}

/**
 * The text of a content value: a string, or the text of its blocks joined with "\n"
 * (`text`, `input_text`, `output_text`; an image shows as "[image]").
 */
export function blocksText(content: unknown): string {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return content === undefined ? "" : JSON.stringify(content) ?? "";
  const parts: string[] = [];
  for (const b of content) {
    if (typeof b === "string") parts.push(b);
    else if (isObj(b) && typeof b.text === "string") parts.push(b.text);
    else if (isObj(b) && typeof b.type === "string" && /image/.test(b.type)) parts.push("[image]");
  }
  return parts.join("\n");
}

/** Rough retained size of a call (cache accounting). */
export function callBytes(call: ToolCallEntry): number {
  let n = 160 + call.name.length * 2 + call.input.length * 2;
  for (const o of Object.values(call.output)) n += 64 + (o.excerpt?.length ?? 0) * 2;
  return n;
}
