/**
 * An empty index, explained: where each source was looked for, whether that directory
 * exists, and which environment variable points it elsewhere (the coverage endpoint's
 * `locations`, the same list `intendant serve` prints at start). Shown once the index is
 * ready and holds no session, instead of a bare row of zeros.
 */
import { html } from "htm/preact";
import type { SourceLocation } from "../api_client.ts";
import { SOURCE_LABEL } from "../lib/sources.ts";

function where(l: SourceLocation, windowDays: number | null) {
  const recent = windowDays === null ? "" : ` from the last ${windowDays} days`;
  switch (l.state) {
    case "skipped":
      return html`skipped: <code>INTENDANT_MESSAGE_SEARCH_DAEMON_HOME_ONLY</code> is on`;
    case "found":
      return html`found, no conversations${recent}`;
    case "unreadable":
      return html`no permission to look; set <code>${l.env}</code> to look elsewhere`;
    case "absent":
      return html`not found; set <code>${l.env}</code> to look elsewhere`;
  }
}

/** The explanation. */
export function CoverageEmpty(
  { locations, windowDays }: { locations: SourceLocation[]; windowDays: number | null },
) {
  return html`
    <div class="coverage-empty" data-empty="">
      <p><strong>Nothing indexed yet.</strong> Intendant looked for conversations here:</p>
      <ul role="list">
          ${locations.map((l) =>
            html`<li data-source=${l.source} data-state=${l.state}>
        <span class=${`src-${l.source} cov-src`}>${SOURCE_LABEL[l.source]}</span>
        <code class="auth-path">${l.path}</code> — ${where(l, windowDays)}
      </li>`
          )}
        </ul>
      <p
        class="muted">Set a variable in the environment of <code>intendant serve</code> and restart it; sessions you run with <code>intendant run</code> appear by themselves.</p>
    </div>
  `;
}
