/**
 * What an agent's own cleanup is about to delete, and what of it the vault holds: the
 * line `intendant serve` prints at start, `vault status` prints, and the dashboard's
 * notice shows ("Claude Code deletes sessions after 30 days; 212 are kept in the vault").
 *
 * Claude Code is the agent that deletes on its own: at startup it removes transcripts
 * (`projects/<project>/<session>.jsonl` and the session's folder) whose file is older than
 * `cleanupPeriodDays` (user settings `<claude home>/settings.json`; default 30, minimum
 * 1), and touches `<claude home>/.last-cleanup` when it ran. The age is the file's mtime,
 * so a session is "due" when its transcript has not changed for `period - DUE_WITHIN_DAYS`
 * days. Project and managed settings can set the period too; only the user file is read
 * (the one a user edits to change it, and inside the home the profile already reads), so
 * the figure says where it came from.
 * The pure core (cleanupRiskOf) works over the vault's catalogs, which hold every kept
 * session's last mtime; readCleanupRisks does the two reads through the contained reader.
 */
import { join } from "node:path";
import { readContained, realFs, statOrNull } from "../durable/mod.ts";
import { type Catalog, latest, sessionGone } from "./catalog.ts";

/** Claude Code's default `cleanupPeriodDays`. */
export const CLAUDE_CLEANUP_DEFAULT_DAYS = 30;
/** "Soon": a session its cleanup deletes within this many days is due. */
export const DUE_WITHIN_DAYS = 7;
/** A period this long is a user's "never" (the community's 99999, 36500, …). */
const NEVER_DAYS = 3650;
const DAY_MS = 86_400_000;
/** settings.json larger than this is not read (a real one is a few KiB). */
const SETTINGS_MAX_BYTES = 1024 * 1024;

/** One agent's cleanup and what the vault holds of what it deletes. */
export interface CleanupRisk {
  source: "claude-code";
  label: string;
  period_days: number;
  /** Where the period came from: the user's settings file, or the agent's default. */
  period_from: "settings" | "default";
  settings_path: string;
  /** When the agent's cleanup last ran (`.last-cleanup`), null when unknown. */
  last_cleanup_ms: number | null;
  /** The agent's sessions the vault holds, and of them those it already deleted. */
  kept: number;
  kept_gone: number;
  /** Sessions still in place that its cleanup deletes within DUE_WITHIN_DAYS (all kept). */
  due_soon: number;
  /** The sentence shown to the user. */
  line: string;
}

/** The period a settings file's text sets, or null (absent, unreadable or invalid). */
export function cleanupPeriodOf(text: string | null): number | null {
  if (text === null) return null;
  try {
    const v = (JSON.parse(text) as { cleanupPeriodDays?: unknown })?.cleanupPeriodDays;
    return typeof v === "number" && Number.isInteger(v) && v >= 1 ? v : null;
  } catch {
    return null;
  }
}

/** The risk over `catalogs` (pure; see the header). Null when the period is a "never". */
export function cleanupRiskOf(o: {
  settingsText: string | null;
  settingsPath: string;
  lastCleanupMs: number | null;
  catalogs: readonly Catalog[];
  now: number;
}): CleanupRisk | null {
  const set = cleanupPeriodOf(o.settingsText);
  const period = set ?? CLAUDE_CLEANUP_DEFAULT_DAYS;
  if (period >= NEVER_DAYS) return null;
  const mine = o.catalogs.filter((c) => c.source === "claude-code");
  const gone = mine.filter(sessionGone);
  const dueBefore = o.now - (period - DUE_WITHIN_DAYS) * DAY_MS;
  const due = mine.filter((c) => {
    if (sessionGone(c)) return false;
    const main = c.files.find((f) => f.role === "main") ?? c.files[0];
    return main !== undefined && main.gone_ms === null && latest(main).mtime_ms < dueBefore;
  });
  const parts = [
    mine.length === 0
      ? "the vault keeps each of them from the first sweep on"
      : `${mine.length} ${mine.length === 1 ? "is" : "are"} kept in the vault`,
  ];
  if (gone.length) parts.push(`${gone.length} of them already deleted by it`);
  if (due.length) parts.push(`${due.length} more due within ${DUE_WITHIN_DAYS} days`);
  return {
    source: "claude-code",
    label: "Claude Code",
    period_days: period,
    period_from: set === null ? "default" : "settings",
    settings_path: o.settingsPath,
    last_cleanup_ms: o.lastCleanupMs,
    kept: mine.length,
    kept_gone: gone.length,
    due_soon: due.length,
    line: `Claude Code deletes sessions after ${period} days (${
      set === null ? "its default cleanupPeriodDays" : "cleanupPeriodDays in its settings"
    }); ${parts.join(", ")}`,
  };
}

/**
 * The risks of the agents whose homes are given (Claude Code's, main home first), read
 * now. An unreadable settings file counts as absent: the default applies, and the line
 * says "its default".
 */
export async function readCleanupRisks(o: {
  claudeHomes: readonly string[];
  catalogs: readonly Catalog[];
  now?: number;
}): Promise<CleanupRisk[]> {
  const home = o.claudeHomes[0];
  const stat = (p: string) => statOrNull(realFs, p).catch(() => null);
  if (!home || !(await stat(home))?.isDirectory) return [];
  const settingsPath = join(home, "settings.json");
  const read = await readContained(settingsPath, { maxBytes: SETTINGS_MAX_BYTES });
  const settingsText = read.ok ? new TextDecoder().decode(read.bytes) : null;
  const last = await stat(join(home, ".last-cleanup"));
  const risk = cleanupRiskOf({
    settingsText,
    settingsPath,
    lastCleanupMs: last?.mtimeMs ?? null,
    catalogs: o.catalogs,
    now: o.now ?? Date.now(),
  });
  return risk ? [risk] : [];
}
