/**
 * The coverage bar: what the message index holds. While the first sweep runs it says
 * "building" with live counts (polled every second); once ready, per-source chips with
 * session and message counts, the window, and an expandable table (CoverageTable) with
 * skipped input, source_gone counts, errors and the legacy matrix. Never blocks the list.
 */
import { html } from "htm/preact";
import type { Coverage, Source } from "../api_client.ts";
import { useCoverage } from "../hooks/use_coverage.ts";
import { plural } from "../lib/format.ts";
import { SOURCE_LABEL, SOURCE_LIST } from "../lib/sources.ts";
import { CoverageTable } from "./coverage_table.ts";
import { RelTime } from "./rel_time.ts";

function sum(c: Coverage, field: "sessions" | "records" | "source_gone"): number {
  return Object.values(c.sources).reduce((n, s) => n + s[field], 0);
}

function chip(c: Coverage, s: Source) {
  const x = c.sources[s];
  if (!x) return null;
  return html`<li class=${`cov-chip src-${s}`}>
    <span>${SOURCE_LABEL[s]}</span> <b>${x.sessions}</b>
    <span class="muted">/ ${x.records} msgs</span>
  </li>`;
}

/** The bar. */
export function CoverageBar() {
  const { coverage: c, error } = useCoverage();
  if (!c) {
    const text = error ? `Coverage unavailable: ${error}` : "Checking the message index…";
    return html`<div class="coverage" role="status">${text}</div>`;
  }
  const building = c.state === "building";
  const gone = sum(c, "source_gone");
  const title = building
    ? html`<span class="pulse" aria-hidden="true" /><strong>Index building</strong>`
    : html`<strong>Message index</strong>`;
  const counts = `${plural(sum(c, "sessions"), "session")} · ${
    plural(sum(c, "records"), "message")
  }${building ? " so far" : ""}`;
  const swept = c.last_sweep_at_ms !== null &&
    html`<span><${RelTime} ms=${c.last_sweep_at_ms} prefix="swept " /></span>`;

  return html`
    <div class=${building ? "coverage building" : "coverage"} data-state=${c.state}>
      <p class="coverage-line" role="status">
          ${title}
          <span>${counts}</span>
          ${c.window_days !== null && html`<span>last ${c.window_days} days</span>`}
          ${gone > 0 && html`<span class="warn-text">${gone} with source gone</span>`}
          ${swept}
        </p>
      <ul class="coverage-chips" role="list" aria-label="Coverage per source">
          ${SOURCE_LIST.map((s) => chip(c, s))}
        </ul>
      <details class="coverage-details">
        <summary>Coverage details</summary>
        <${CoverageTable} coverage=${c} />
      </details>
    </div>
  `;
}
