/**
 * The coverage bar: what the message index holds. While the first sweep runs it says
 * "Index building" with what is already searchable and, per source, the files read and
 * messages found so far (polled every second); once ready, per-source chips with session
 * and message counts, the window, and an expandable table (CoverageTable). An empty
 * ready index says where it looked and which variable points each source elsewhere
 * (CoverageEmpty). Damaged index shards (coverage.degraded) are counted in the line:
 * being rebuilt, or lost with their source. Freshness is shown only when the index lags
 * (coverage.freshness older than STALE_UI_MS, or a failed watch's note): a daemon whose
 * watch holds is current, and saying "swept 2 s ago" all day was noise. On narrow screens (≤ NARROW_MAX_PX), and on
 * every screen while a query is shown (`compact`: the results are the news then, and the
 * full panel pushed them 140 px down), the whole panel is one summary line — cut with an
 * ellipsis, warnings first, the whole line repeated inside — collapsed until tapped (open
 * from the start only for an empty index). Never blocks the list. The parent polls
 * coverage (one poller for the bar and the toolbar's source chips).
 */
import { html } from "htm/preact";
import type { CoverageView, Source } from "../api_client.ts";
import { useMedia } from "../hooks/use_media.ts";
import { plural } from "../lib/format.ts";
import { SOURCE_LABEL, SOURCE_LIST } from "../lib/sources.ts";
import { CoverageEmpty } from "./coverage_empty.ts";
import { CoverageProgress } from "./coverage_progress.ts";
import { CoverageTable } from "./coverage_table.ts";
import { RelTime } from "./rel_time.ts";

/** An index older than this is shown as behind (a healthy watch answers at age 0). */
export const STALE_UI_MS = 10_000;

/** The lag line, or null while the index is current. */
function staleText(c: CoverageView) {
  const f = c.freshness;
  if (!f || f.as_of_ms === null) return null;
  if (f.note === null && (f.age_ms ?? 0) < STALE_UI_MS) return null;
  return html`<span class="warn-text" data-stale="1" title=${f.note ?? ""}>
    <${RelTime} ms=${f.as_of_ms} prefix="index as of " />${f.note ? ` · ${f.note}` : ""}
  </span>`;
}

/** Widest viewport that gets the collapsed panel (the stylesheet's narrow breakpoint). */
export const NARROW_MAX_PX = 600;

function sum(c: CoverageView, field: "sessions" | "records" | "source_gone"): number {
  return Object.values(c.sources).reduce((n, s) => n + s[field], 0);
}

function chip(c: CoverageView, s: Source) {
  const x = c.sources[s];
  if (!x) return null;
  return html`<li class=${`cov-chip src-${s}`}>
    <span>${SOURCE_LABEL[s]}</span> <b>${x.sessions.toLocaleString()}</b>
    <span class="muted">/ ${plural(x.records, "message")}</span>
  </li>`;
}

/** The bar, over coverage polled by its parent (hooks/use_coverage.ts). */
export function CoverageBar(
  { coverage: c, error, compact = false }: {
    coverage: CoverageView | null;
    error: string | null;
    /** One collapsed line whatever the width (a query is shown). @default false */
    compact?: boolean;
  },
) {
  const narrow = useMedia(`(max-width: ${NARROW_MAX_PX}px)`);
  if (!c) {
    const text = error ? `Coverage unavailable: ${error}` : "Checking the message index…";
    return html`<div class="coverage" role="status">${text}</div>`;
  }
  const building = c.state === "building";
  const sessions = sum(c, "sessions");
  const gone = sum(c, "source_gone");
  const title = building
    ? html`<span class="pulse" aria-hidden="true" /><strong>Index building</strong>`
    : html`<strong>Message index</strong>`;
  // Damaged index shards (F8): not searchable until the sweep rebuilds them, or lost.
  const d = c.degraded;
  const degraded = d && d.count > 0
    ? [
      d.count > d.lost ? `${plural(d.count - d.lost, "session")} damaged: being rebuilt` : "",
      d.lost > 0 ? `${plural(d.lost, "session")} damaged and lost (source gone)` : "",
    ].filter(Boolean).join(" · ")
    : null;
  const counts = `${plural(sessions, "session")} · ${plural(sum(c, "records"), "message")}${
    building ? " searchable so far" : ""
  }`;
  // Warnings right after the title: the folded line is cut to one line with an ellipsis,
  // and what is wrong must be what stays visible.
  const line = html`
    ${title}
    ${gone > 0 && html`<span class="warn-text">${gone} with the source file deleted</span>`}
    ${degraded &&
      html`<span class="warn-text" data-degraded=${String(d!.count)}>${degraded}</span>`}
    ${staleText(c)}
    <span>${counts}</span>
    ${c.window_days !== null && html`<span>last ${c.window_days} days</span>`}
  `;
  const progress = building && c.sweep_progress;
  const emptyIndex = !building && sessions === 0 && (c.locations?.length ?? 0) > 0;
  const body = html`
    ${progress
      ? html`<${CoverageProgress} progress=${progress} />`
      : !emptyIndex && html`<ul class="coverage-chips" role="list" aria-label="Coverage per source">
          ${SOURCE_LIST.map((s) => chip(c, s))}
        </ul>`}
    ${emptyIndex && html`<${CoverageEmpty} locations=${c.locations} windowDays=${c.window_days} />`}
    <details class="coverage-details">
      <summary>Coverage details</summary>
      <${CoverageTable} coverage=${c} />
    </details>
  `;
  const cls = building ? "coverage building" : "coverage";
  if (narrow || compact) {
    // Collapsed unless the index is empty (then where it looked is the news). `open` only
    // changes with that: the user's own toggle survives the once-a-second re-render.
    return html`<details class=${`${cls} coverage-fold`} data-state=${c.state} open=${
      emptyIndex || undefined
    }>
      <summary class="coverage-line"><span class="coverage-sum" role="status">${line}</span></summary>
      <p class="coverage-full">${line}</p>
      ${body}
    </details>`;
  }
  return html`<div class=${cls} data-state=${c.state}>
    <p class="coverage-line" role="status">${line}</p>
    ${body}
  </div>`;
}
