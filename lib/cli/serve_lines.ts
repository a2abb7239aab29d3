/**
 * What `intendant serve` says at start, besides the URL: one line per source (found, with
 * the directory; absent, with the directory it looked at and the variable that points it
 * elsewhere; or left out by home-only mode), and one line when the first sweep is done
 * (sessions and messages in the index, how long the sweep took, the sources that hold
 * something). Paths come from the user's own configuration but still pass terminalSafe: an
 * environment value can carry escape sequences like any other text.
 */
import { ENV_MESSAGE_SEARCH_DAEMON_HOME_ONLY } from "../config.ts";
import type { Coverage, SourceLocation, SweepReport } from "../message_search/mod.ts";
import { terminalSafe } from "../text/mod.ts";

/** The "Sources:" block, one line per source. */
export function sourceLines(locations: readonly SourceLocation[]): string {
  const width = Math.max(...locations.map((l) => l.source.length));
  const lines = locations.map((l) => {
    const name = l.source.padEnd(width);
    const path = terminalSafe(l.path);
    switch (l.state) {
      case "skipped":
        return `  ${name}  skipped ${path} (${ENV_MESSAGE_SEARCH_DAEMON_HOME_ONLY} is on: machine-wide homes are not indexed)`;
      case "found":
        return `  ${name}  found   ${path}`;
      case "unreadable":
        return `  ${name}  no access to ${path} (check its permissions, or set ${l.env} to look elsewhere)`;
      case "absent":
        return l.source === "intendant"
          ? `  ${name}  absent  ${path} (no sessions run yet; set ${l.env} for another state root)`
          : `  ${name}  absent  ${path} (set ${l.env} to look elsewhere)`;
    }
  });
  return `Sources:\n${lines.join("\n")}\n`;
}

function seconds(ms: number): string {
  return ms < 10_000 ? `${(ms / 1000).toFixed(1)} s` : `${Math.round(ms / 1000)} s`;
}

/** The line printed when the first sweep is done. */
export function firstSweepLine(report: SweepReport, coverage: Coverage): string {
  const held = Object.entries(coverage.sources).filter(([, s]) => s.sessions > 0);
  const sessions = held.reduce((n, [, s]) => n + s.sessions, 0);
  const records = held.reduce((n, [, s]) => n + s.records, 0);
  const took = seconds(report.durationMs);
  if (sessions === 0) {
    const recent = coverage.window_days === null
      ? ""
      : ` from the last ${coverage.window_days} days`;
    return `First sweep done in ${took}: nothing indexed (no conversations${recent} in the sources above)\n`;
  }
  const per = held.map(([src, s]) => `${src} ${s.sessions}/${s.records}`).join(", ");
  return `First sweep done in ${took}: ${sessions} sessions, ${records} messages indexed (sessions/messages: ${per})\n`;
}
