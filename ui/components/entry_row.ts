/**
 * One row of a session's replayed activity. Messages show role, provenance, time and
 * text (superseded ones dimmed and labelled); a rollback is a visible cut across the
 * timeline; commands and their output are code blocks (output collapsed); approvals,
 * steers, questions, errors and session start/end are compact lines. The anchored row
 * (jump-to-hit) carries the `anchored` class and aria-current, and the query's words
 * are marked inside it.
 */
import { html } from "htm/preact";
import type { DetailEntry } from "../api_client.ts";
import { findTerms } from "../lib/fold.ts";
import { MarkedText } from "./marked_text.ts";
import { RelTime } from "./rel_time.ts";

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

function outputs(d: Detail) {
  const all = Object.entries((d.output ?? {}) as Record<string, Output>);
  return all.map(([label, o]) => {
    const size = typeof o.bytes === "number" ? ` · ${o.bytes.toLocaleString()} B` : "";
    const body = o.unavailable
      ? html`<p class="muted">unavailable: ${o.unavailable}</p>`
      : html`<pre class="code">${o.excerpt ?? ""}</pre>`;
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

function message(e: DetailEntry, d: Detail, text: (t: string) => unknown) {
  const who = e.role === "assistant" ? "Assistant" : "User";
  const provenance = typeof d.provenance === "string" &&
    html`<span class="tag">${words(d.provenance)}</span>`;
  const body = e.text === undefined
    ? html`<span class="muted">text unavailable</span>`
    : text(e.text);
  return html`
    <div class="entry-head">
          <span class=${`role role-${e.role}`}>${who}</span>
          ${provenance}
          <${RelTime} ms=${e.ts_ms} />
          ${e.superseded && html`<span class="badge sup">superseded</span>`}
          ${e.subagent && html`<span class="badge">subagent</span>`}
          ${d.text_truncated === true && html`<span class="badge">truncated</span>`}
        </div>
    <div class="text">${body}</div>
  `;
}

function body(e: DetailEntry, terms: readonly string[]) {
  const d = e.detail && typeof e.detail === "object" ? e.detail as Detail : {};
  const text = (t: string) => html`<${MarkedText} text=${t} ranges=${findTerms(t, terms)} />`;
  const time = html`<${RelTime} ms=${e.ts_ms} />`;
  switch (e.kind) {
    case "message":
      return message(e, d, text);
    case "cut": {
      const label = CUT_LABEL[String(d.kind)] ?? "Rolled back";
      const at = e.ts_ms !== null && [" · ", time];
      return html`
        <div class="cut-line">
          <span>⟲ ${label} — the messages it replaced are superseded${at}</span>
        </div>
      `;
    }
    case "command":
    case "command_batch": {
      const exit = typeof d.exit_code === "number" &&
        html`<span class="tag">exit ${d.exit_code}</span>`;
      return html`<div class="entry-head"><span class="tag">command</span>${time}${exit}</div>
        <pre class="code cmd">${e.text ? text(e.text) : "…"}</pre>${outputs(d)}`;
    }
    case "command_output": {
      const codes = Array.isArray(d.exit_codes) && d.exit_codes.join(", ");
      const exit = codes && html`<span class="tag">exit ${codes}</span>`;
      return html`<div class="entry-head"><span class="tag">output</span>${time}${exit}</div>
        ${outputs(d)}`;
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
  /** Words to mark (only used on the anchored row). */
  terms: readonly string[];
}

/** A detail row. */
export function EntryRow({ entry: e, anchored, terms }: EntryRowProps) {
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
        ${body(e, anchored ? terms : [])}
      </li>
  `;
}
