/**
 * The tool calls a turn made, under its message (or its `tool_calls` entry): one
 * collapsed <details> per call whose summary is the call on one line — tool name,
 * input (clamped to two lines; whole when open), exit code or status, duration — and
 * whose body is each output as plain monospace text (never Markdown: tool output is
 * data), an empty output as a word, a refused one with the reason. Closed by default:
 * a long session stays scannable, one click shows what a command printed. Inputs and
 * outputs are masked while "Mask secrets" is on (commands are where keys get exported).
 */
import { html } from "htm/preact";
import type { ToolCallEntry, ToolOutput } from "../api_client.ts";
import { formatBytes, formatDuration } from "../lib/format.ts";
import { useMaskSecrets } from "../hooks/use_mask_secrets.ts";
import { utf8Length } from "../lib/highlight.ts";
import { shownText } from "../lib/masking.ts";

/** What a call's approval record says, in words. */
function approvalText(a: unknown): string | null {
  if (!a || typeof a !== "object") return null;
  const { state, by, reason } = a as { state?: string; by?: string; reason?: string };
  if (state === "auto") return reason ? `auto-approved (${reason})` : "auto-approved";
  if (state === "approved") return by ? `approved by ${by}` : "approved";
  if (state === "requested") return "awaiting approval";
  return state ? String(state) : null;
}

function statusText(t: ToolCallEntry): string {
  if (t.status === "pending") return "no result recorded";
  if (typeof t.exit_code === "number") return `exit ${t.exit_code}`;
  const codes = t.detail?.exit_codes;
  if (Array.isArray(codes)) return `exits ${codes.join(", ")}`;
  return t.status === "ok" ? "done" : "failed";
}

function output(label: string, o: ToolOutput, mask: boolean) {
  if (o.unavailable) {
    return html`<p class="tool-out muted">${label}: unavailable (${o.unavailable})</p>`;
  }
  const raw = o.excerpt ?? "";
  if (!raw && !o.truncated) return html`<p class="tool-out muted">${label}: empty</p>`;
  const size = typeof o.bytes === "number" ? formatBytes(o.bytes) : null;
  // The size is the original's: masking changes what is shown, not what was printed.
  const cut = o.truncated ? `first ${formatBytes(utf8Length(raw))} of ${size ?? "more"}` : size;
  return html`
    <div class="tool-out">
      <div class="tool-label">${label}${cut && html`
        <span class="muted">· ${cut}</span>
      `}</div>
      <pre class="code">${shownText(raw, mask)}</pre>
    </div>
  `;
}

function call(t: ToolCallEntry, i: number, mask: boolean) {
  const facts = [
    statusText(t),
    typeof t.duration_ms === "number" ? formatDuration(t.duration_ms) : null,
    approvalText(t.detail?.approval),
    t.detail?.pty === true ? "pty" : null,
    // Logs from before per-command events: the turn's commands share one output.
    t.detail?.batch === true ? "the turn's combined output" : null,
  ].filter(Boolean).join(" · ");
  const outs = Object.entries(t.output ?? {});
  return html`
    <li key=${i} class=${`tool tool-${t.status}`}>
      <details class="tool-call">
          <summary>
            <span class="tool-name">${t.name}</span>
            <code class="tool-input">${shownText(t.input, mask) || "(not recorded)"}</code>
            <span class="tool-facts">${facts}</span>
          </summary>
          ${t.input_truncated && html`<p class="muted tool-out">input cut at its size cap</p>`}
          ${outs.length ? outs.map(([label, o]) => output(label, o, mask)) : html`
            <p class="tool-out muted">no output recorded</p>
          `}
        </details>
    </li>
  `;
}

/** The calls of one turn. */
export function ToolCalls({ tools }: { tools: readonly ToolCallEntry[] }) {
  const mask = useMaskSecrets();
  const label = tools.length === 1 ? "1 tool call" : `${tools.length} tool calls`;
  return html`<ul class="tools" aria-label=${label}>${tools.map((t, i) => call(t, i, mask))}</ul>`;
}
