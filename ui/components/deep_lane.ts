/**
 * The Deep Search lane (`scope=deep`): what message search cannot reach — tool calls and
 * their output, reasoning, runtime logs — scanned in every source's files and the vault's
 * copies of deleted sessions, on request. Hits stream in as pages arrive
 * (use_deep_search.ts) under a live status ("Scanning… 120 of 900 sessions · 14 MiB read ·
 * 3 matches") with Stop; a paused run (hit cap, stopped, error) offers Continue. Each hit
 * names its agent, session (a link to its page with the query highlighted), file and
 * line, says "from the vault" when it was read from the vault's copy (the agent deleted
 * the file, or keeps the session as database rows), and quotes the server's
 * masked snippet with the matches marked. The closing notes say exactly what was scanned
 * and what was not (the same words as the CLI: lib/catalog deep_tally.ts); "No matches"
 * only after a complete scan.
 */
import { html } from "htm/preact";
import type { DeepHit } from "../api_client.ts";
import { describeDeepScan } from "../../lib/catalog/deep_tally.ts";
import { formatBytes } from "../../lib/text/mod.ts";
import type { DeepModel, DeepState } from "../hooks/use_deep_search.ts";
import { snippetRanges } from "../lib/highlight.ts";
import { sessionHref } from "../lib/route.ts";
import { MarkedText } from "./marked_text.ts";
import { Notice } from "./notice.ts";
import { SourceBadge } from "./source_badge.ts";

/** Props of {@link DeepLane}. */
export interface DeepLaneProps {
  model: DeepModel;
  /** Back to message search. */
  onLeave(): void;
}

const baseName = (p: string) => p.slice(p.lastIndexOf("/") + 1);

function statusText(s: DeepState): string {
  const { sessions_done: done, sessions_total: total } = s.progress;
  const found = `${s.hits.length} match${s.hits.length === 1 ? "" : "es"}`;
  const read = `${formatBytes(s.scanned.bytes)} read`;
  if (s.status === "running") {
    return total > 0
      ? `Scanning… ${done} of ${total} sessions · ${read} · ${found}`
      : `Scanning… ${found}`;
  }
  if (s.status === "done") return `Complete: ${total} sessions · ${read} · ${found}`;
  if (s.status === "capped") {
    return `Paused at ${found} (${done} of ${total} sessions scanned)`;
  }
  if (s.status === "stopped") return `Stopped: ${done} of ${total} sessions · ${found}`;
  return `Stopped by an error after ${done} of ${total} sessions · ${found}`;
}

function DeepHitRow({ hit, q }: { hit: DeepHit; q: string }) {
  const at = hit.line !== undefined ? `:${hit.line}` : "";
  return html`
    <li class="hit-item deep-hit" data-source=${hit.source} data-from=${hit.from ?? "file"}>
      <a class="hit" href=${sessionHref(hit.key, { q })} data-result="">
        <span class="hit-meta">
          <${SourceBadge} source=${hit.source} />
          <span class="deep-session" title=${hit.session_id}>${hit.session_id.slice(0, 8)}</span>
          <span class="deep-file" title=${hit.file}>${baseName(hit.file)}${at}</span>
          ${hit.from === "vault" &&
            html`
              <span class="badge"
                title="Read from the vault's copy: the agent deleted the file, or keeps the session as database rows">from the vault</span>
            `}
        </span>
        <span class="snippet"><${MarkedText} text=${hit.snippet}
          ranges=${snippetRanges(hit.snippet, 0, hit.ranges)} /></span>
      </a>
    </li>
  `;
}

/** The lane. */
export function DeepLane({ model, onLeave }: DeepLaneProps) {
  const s = model.state;
  if (!s) return null;
  const running = s.status === "running";
  const paused = s.status === "capped" || s.status === "stopped" || s.status === "error";
  const notes = s.status === "done" || paused
    ? describeDeepScan(s.scanned, { hits: s.hits.length })
    : [];
  return html`
    <section class="lane deep-lane" aria-labelledby="lane-deep-h" aria-busy=${String(running)}
      data-q=${s.q} data-state=${s.status}>
      <div class="lane-head">
        <h2 id="lane-deep-h">Tool output too</h2>
        <span class="lane-status" role="status">${statusText(s)}</span>
        ${running &&
          html`<button type="button" class="btn small deep-stop" onClick=${model.stop}>Stop</button>`}
        ${paused &&
          html`<button type="button" class="btn small deep-continue" onClick=${model.resume}>Continue</button>`}
      </div>
      <p class="archive-label" role="note">
        Deep Search reads every agent's files as written — tool calls and their output,
        reasoning, logs — and the vault's copies of deleted sessions. Secrets are masked.
      </p>
      ${s.error && html`<${Notice} tone="error" text=${s.error} action=${{
        label: "Continue",
        run: model.resume,
      }} />`}
      ${s.status === "done" && !s.hits.length &&
        html`<p class="empty">No matches in any file, tool output included.</p>`}
      <ul class="hits deep-hits" role="list" aria-label="Matches in tool output and logs">
        ${s.hits.map((h, i) => html`<${DeepHitRow} key=${i} hit=${h} q=${s.q} />`)}
      </ul>
      ${notes.length > 0 && html`
        <ul class="deep-notes" role="list" aria-label="What was scanned">
          ${notes.map((n) => html`<li>${n}</li>`)}
        </ul>
      `}
      <p class="archive-offer">
        <button type="button" class="btn link deep-leave" onClick=${onLeave}>
          Back to message search</button>
      </p>
    </section>
  `;
}
