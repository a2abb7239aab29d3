/**
 * The first sweep, live: per source met so far, transcript files read and messages found
 * (the coverage endpoint's sweep_progress, polled every second while building), the
 * source being read marked. Shown instead of bare "building" so a long first backfill
 * visibly moves.
 */
import { html } from "htm/preact";
import type { SweepProgressView } from "../api_client.ts";
import { plural } from "../lib/format.ts";
import { SOURCE_LABEL, SOURCE_LIST } from "../lib/sources.ts";

/** The progress chips. */
export function CoverageProgress({ progress: p }: { progress: SweepProgressView }) {
  const chips = SOURCE_LIST.filter((s) => p.sources[s]).map((s) => {
    const x = p.sources[s]!;
    const reading = s === p.current;
    return html`<li class=${`cov-chip src-${s}`} data-source=${s} aria-current=${
      reading ? "true" : undefined
    }>
      <span>${SOURCE_LABEL[s]}</span> ${plural(x.files, "file")} · ${plural(x.messages, "message")}
      ${reading && html`<span class="muted">reading…</span>`}
    </li>`;
  });
  return html`
    <div class="coverage-progress">
      <p class="muted">First sweep, ${Math.round(
        p.elapsed_ms / 1000,
      )} s so far: files read and messages found</p>
      <ul class="coverage-chips" role="list" aria-label="First sweep per source">${chips}</ul>
    </div>
  `;
}
