/**
 * One row of a session's replayed activity. Messages show role, provenance, time and
 * their text as safe Markdown (rich_text.ts), then the tool calls their turn made,
 * collapsed (tool_calls.ts); a turn with calls but no prose is a `tool_calls` row of its
 * own. Badges say what happened in plain words: "rewound" (a later rollback cut the
 * message), "cut at 64 KiB" (the server names the cap). A rollback is a visible cut
 * across the timeline; a context snapshot is one compact line saying whether its
 * sidecar is still on disk; approvals, steers, questions, errors and session start/end
 * are compact lines. The anchored row (jump-to-hit, or the current hit of n/p) carries
 * the `anchored` class and aria-current; the query's words are marked in hit rows.
 * With "Mask secrets" on (the default) every text a row shows — message, command, output,
 * summary, line — is masked (lib/masking.ts), and a message that had secrets hidden says
 * how many in a badge; the query's words are then marked in the masked text.
 */
import { html } from "htm/preact";
import { useMemo } from "preact/hooks";
import type { DetailEntry } from "../api_client.ts";
import { useMaskSecrets } from "../hooks/use_mask_secrets.ts";
import { findTerms } from "../lib/fold.ts";
import { formatBytes, plural } from "../lib/format.ts";
import { type ShownMessage, shownMessage, shownText } from "../lib/masking.ts";
import { MarkedText } from "./marked_text.ts";
import { RelTime } from "./rel_time.ts";
import { RichText } from "./rich_text.ts";
import { ToolCalls } from "./tool_calls.ts";

type Detail = Record<string, unknown>;
interface Output {
  excerpt?: string;
  truncated?: boolean;
  bytes?: number;
  unavailable?: string;
}

/** What each kind of cut did (native tail_rollback; the external supersession marks). */
const CUT_LABEL: Record<string, string> = {
  tail_rollback: "Rolled back",
  seq_cut: "Rolled back",
  turn_count: "Turns rolled back",
  item_anchor: "Rolled back to an earlier item",
  record_ids: "Undone (abandoned branch)",
  generation_restore: "Earlier state restored",
};

const LINE_LABEL: Record<string, string> = {
  approval: "Approval",
  steer: "Steer",
  question: "Question",
  answer: "Answered",
  error: "Error",
  warning: "Warning",
  session_start: "Session started",
  session_end: "Session ended",
  log_truncated: "Log truncated",
};

const words = (s: string) => s.replaceAll("_", " ");

function outputs(d: Detail, mask: boolean) {
  const all = Object.entries((d.output ?? {}) as Record<string, Output>);
  return all.map(([label, o]) => {
    const size = typeof o.bytes === "number" ? ` · ${o.bytes.toLocaleString()} B` : "";
    const body = o.unavailable
      ? html`<p class="muted">unavailable: ${o.unavailable}</p>`
      : html`<pre class="code">${shownText(o.excerpt ?? "", mask)}</pre>`;
    return html`<details class="output">
      <summary>${label}${size}${o.truncated ? " (excerpt)" : ""}</summary>${body}
    </details>`;
  });
}

function facts(e: DetailEntry, d: Detail): string {
  const pick = (keys: string[]) =>
    keys.map((k) => d[k]).filter((v) => typeof v === "string" || typeof v === "number");
  if (e.kind === "approval") return pick(["state", "by", "reason"]).join(" · ");
  if (e.kind === "session_start") return pick(["provider", "model", "autonomy"]).join(" · ");
  if (e.kind === "session_end") {
    const turns = typeof d.turns === "number" ? `${d.turns} turns` : null;
    return [d.status, turns].filter(Boolean).join(" · ");
  }
  if (e.kind === "log_truncated") return "only the head of a very long log is shown";
  return "";
}

const REWOUND_TIP = "A later rollback cut this message: the agent no longer sees it";

/** "cut at 64 KiB": the shown text stops at the detail's cap, or the index kept only a head. */
function cutBadge(d: Detail) {
  const cap = typeof d.text_cap_bytes === "number"
    ? d.text_cap_bytes
    : typeof d.record_cap_bytes === "number"
    ? d.record_cap_bytes
    : null;
  if (cap === null) return null;
  const tip = `Only the first ${formatBytes(cap)} of this message is shown`;
  return html`<span class="badge" title=${tip}>cut at ${formatBytes(cap)}</span>`;
}

/** A message's text as shown (memoized per text, switch and query; see ShownMessage). */
function useShownMessage(text: string | undefined, mask: boolean, terms: readonly string[]) {
  const key = terms.join("\u0000");
  return useMemo(
    () => text === undefined ? null : shownMessage(text, mask, terms),
    [text, mask, key],
  );
}

function hiddenBadge(hidden: number) {
  if (!hidden) return null;
  const tip = "Turn off “Mask secrets” at the top to show them as written";
  return html`<span class="badge masked" title=${tip}>${plural(hidden, "secret")} masked</span>`;
}

function message(
  e: DetailEntry,
  d: Detail,
  terms: readonly string[],
  shown: ShownMessage | null,
) {
  const who = e.role === "assistant" ? "Assistant" : "User";
  const provenance = typeof d.provenance === "string" &&
    html`<span class="tag">${words(d.provenance)}</span>`;
  const body = shown === null
    ? html`<span class="muted">text unavailable</span>`
    : html`<${RichText} text=${e.text} terms=${terms} mask=${shown.hidden > 0} />`;
  return html`
    <div class="entry-head">
          <span class=${`role role-${e.role}`}>${who}</span>
          ${provenance}
          <${RelTime} ms=${e.ts_ms} />
          ${e.superseded && html`<span class="badge sup" title=${REWOUND_TIP}>rewound</span>`}
          ${e.subagent && html`<span class="badge">subagent</span>`}
          ${cutBadge(d)}
          ${hiddenBadge(shown?.hidden ?? 0)}
        </div>
    <div class="text rich">${body}</div>
    ${e.tools?.length ? html`<${ToolCalls} tools=${e.tools} />` : null}
  `;
}

/** A context snapshot: what the model was given, and whether the sidecar still holds it. */
function snapshot(d: Detail): string {
  const n = (k: string, word: string) =>
    typeof d[k] === "number" ? `${(d[k] as number).toLocaleString()} ${word}` : null;
  const sidecar = d.sidecar === "on_disk"
    ? "snapshot file on disk"
    : d.sidecar === "gone"
    ? "snapshot file rotated away (only the latest is kept)"
    : typeof d.sidecar === "string"
    ? `snapshot file unreadable (${words(d.sidecar)})`
    : null;
  const labels = Array.isArray(d.labels) && d.labels.length ? d.labels.join(", ") : null;
  return [n("tokens", "tokens"), n("item_count", "items"), labels, sidecar].filter(Boolean)
    .join(" · ");
}

function body(e: DetailEntry, terms: readonly string[], mask: boolean, shown: ShownMessage | null) {
  const d = e.detail && typeof e.detail === "object" ? e.detail as Detail : {};
  const text = (raw: string) => {
    const t = shownMessage(raw, mask, terms);
    return html`<${MarkedText} text=${t.text} ranges=${findTerms(t.text, t.terms)} />`;
  };
  const time = html`<${RelTime} ms=${e.ts_ms} />`;
  switch (e.kind) {
    case "message":
      return message(e, d, terms, shown);
    case "tool_calls": {
      const label = d.by === "user" ? "commands you ran" : "tool calls";
      return html`
        <div class="entry-head"><span class="tag">${label}</span>${time}</div>
        <${ToolCalls} tools=${e.tools ?? []} />
      `;
    }
    case "context_snapshot": {
      // Native: tokens/items/sidecar; external markers: their kind and, maybe, a summary.
      const label = typeof d.kind === "string" ? `Context: ${words(d.kind)}` : "Context snapshot";
      const summary = d.summary as { excerpt?: string } | undefined;
      return html`<div class="entry-line">
        <span class="tag">${label}</span>
        <span class="muted">${snapshot(d)}</span> ${time}
      </div>
      ${
        summary?.excerpt && html`
          <details class="output">
            <summary>summary</summary>
            <pre class="code">${shownText(summary.excerpt, mask)}</pre>
          </details>
        `
      }`;
    }
    case "cut": {
      const label = CUT_LABEL[String(d.kind)] ?? "Rolled back";
      const at = e.ts_ms !== null && [" · ", time];
      return html`
        <div class="cut-line">
          <span>⟲ ${label} — the messages after this point were rewound${at}</span>
        </div>
      `;
    }
    // Producers that do not group their tool calls yet (see DetailEntry.kind).
    case "command":
    case "command_batch": {
      const exit = typeof d.exit_code === "number" &&
        html`<span class="tag">exit ${d.exit_code}</span>`;
      return html`<div class="entry-head"><span class="tag">command</span>${time}${exit}</div>
        <pre class="code cmd">${e.text ? text(e.text) : "…"}</pre>${outputs(d, mask)}`;
    }
    case "command_output": {
      const codes = Array.isArray(d.exit_codes) && d.exit_codes.join(", ");
      const exit = codes && html`<span class="tag">exit ${codes}</span>`;
      return html`<div class="entry-head"><span class="tag">output</span>${time}${exit}</div>
        ${outputs(d, mask)}`;
    }
    default: {
      const f = facts(e, d);
      const label = LINE_LABEL[e.kind] ?? words(e.kind);
      return html`<div class="entry-line">
        <span class="tag">${label}</span>
        ${e.text && html`<span class="line-text">${text(e.text)}</span>`}
        ${f && html`<span class="muted">${f}</span>`} ${time}
      </div>`;
    }
  }
}

/** Props of {@link EntryRow}. */
export interface EntryRowProps {
  entry: DetailEntry;
  anchored: boolean;
  /** Words to mark in this row (empty: none). */
  terms: readonly string[];
}

/** A detail row. */
export function EntryRow({ entry: e, anchored, terms }: EntryRowProps) {
  const mask = useMaskSecrets();
  const shown = useShownMessage(e.kind === "message" ? e.text : undefined, mask, terms);
  const cls = [
    "entry",
    `kind-${e.kind}`,
    e.role && `from-${e.role}`,
    e.superseded && "superseded",
    anchored && "anchored",
  ].filter(Boolean).join(" ");
  return html`
    <li id=${`entry-${e.index}`} class=${cls} data-index=${e.index}
      aria-current=${anchored ? "true" : undefined} tabindex=${anchored ? -1 : undefined}>
        ${body(e, terms, mask, shown)}
      </li>
  `;
}
