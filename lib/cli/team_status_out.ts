/**
 * How `intendant team status` prints: an aligned table for people and a stable `--json`
 * shape for scripts. Every string that came from the server (versions, role names,
 * machine names, binary versions) goes through terminalSafe here, or stringifyTerminalSafe
 * for JSON, so a hostile row cannot drive the terminal.
 */
import type { TeamDb, TeamStatus, TeamUrl } from "../team/mod.ts";
import { formatBytes, terminalSafe } from "../text/mod.ts";

/** `3 s`, `5 min`, `2 h 10 min`, `4 d 3 h`. */
export function formatAge(ms: number): string {
  const s = Math.floor(ms / 1000);
  if (s < 60) return `${s} s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m} min`;
  const h = Math.floor(m / 60);
  if (h < 48) return m % 60 ? `${h} h ${m % 60} min` : `${h} h`;
  const d = Math.floor(h / 24);
  return h % 24 ? `${d} d ${h % 24} h` : `${d} d`;
}

/** The --json shape: the status plus who/where. */
export function teamStatusJson(url: TeamUrl, db: TeamDb, s: TeamStatus) {
  return {
    team: url.redacted,
    server_version: db.serverVersion,
    ...s,
  };
}

/** Pads the columns of `rows` (first row: header) to equal widths, two spaces apart. */
function table(rows: string[][], rightAligned: Set<number>): string[] {
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)));
  return rows.map((r) =>
    r.map((c, i) => (rightAligned.has(i) ? c.padStart(widths[i]!) : c.padEnd(widths[i]!)))
      .join("  ").trimEnd()
  );
}

/** The human status. */
export function formatTeamStatus(url: TeamUrl, db: TeamDb, s: TeamStatus): string {
  const out = [
    `team database ${terminalSafe(url.redacted)}`,
    `server: PostgreSQL ${terminalSafe(db.serverVersion)}; team revision ${s.revision}; ` +
    `retention: ${s.retention_days === null ? "keep everything" : `${s.retention_days} days`}`,
  ];
  if (s.machines.length === 0) {
    out.push(
      "no machines yet: publish from each machine with `intendant index --team URL` (or keep " +
        "`intendant serve --team URL` running); `intendant team add-machine NAME` gives each " +
        "machine its own role",
    );
    return out.join("\n") + "\n";
  }
  const rows = [[
    "machine",
    "role",
    "last publish (UTC)",
    "age",
    "revs behind",
    "sessions",
    "records",
    "rev",
    "version",
  ]];
  for (const m of s.machines) {
    const when = m.last_publish_at === null
      ? "never"
      : m.last_publish_at.slice(0, 19).replace("T", " ");
    rows.push([
      terminalSafe(m.name),
      terminalSafe(m.role),
      when,
      m.lag_ms === null ? "-" : formatAge(m.lag_ms),
      m.revisions_behind === null ? "-" : String(m.revisions_behind),
      String(m.sessions),
      String(m.records),
      m.last_publish_rev === null ? "-" : String(m.last_publish_rev),
      m.binary_version === null ? "-" : terminalSafe(m.binary_version),
    ]);
  }
  out.push("", ...table(rows, new Set([3, 4, 5, 6, 7])), "");
  const never = s.machines.filter((m) => m.last_publish_at === null).length;
  out.push(
    `${s.records_total} records in ${s.sessions_total} sessions from ${s.machines.length} ` +
      `machine${s.machines.length === 1 ? "" : "s"}` +
      (never > 0 ? ` (${never} never published: run \`intendant index --team URL\` there)` : ""),
    `disk: ${formatBytes(s.disk_bytes.total)} (records ${formatBytes(s.disk_bytes.records)}, ` +
      `sessions ${formatBytes(s.disk_bytes.sessions)}, indexes included) for ` +
      `${formatBytes(s.prose_bytes)} of prose` +
      (s.disk_to_prose === null ? "" : ` (${s.disk_to_prose.toFixed(1)}×)`),
  );
  return out.join("\n") + "\n";
}
