/**
 * `intendant index [--json] [--team URL]`: runs one message-index sweep now (after startup
 * maintenance: GC, generation verification and the trash GC) and prints coverage per
 * source. With a team configured (`--team URL` or INTENDANT_TEAM_URL) it then publishes
 * this machine's changes to the team database (lib/team publisher: only what changed since
 * the last publish) and says what it published. The local sweep is complete before the
 * publish starts: a team database that cannot be reached fails the command (exit 1, one
 * line) with the local index already current, and the next run publishes everything
 * still missing (the publisher diffs against the server).
 */
import { resolveConfig } from "../config.ts";
import {
  type Coverage,
  createMessageIndex,
  indexerCoverage,
  type SweepReport,
} from "../message_search/mod.ts";
import { finishInterruptedDeletes, gcTrash } from "../catalog/mod.ts";
import { boolFlag, parseArgs, stringFlag } from "./parse_args.ts";
import type { CliIo, Command } from "./io.ts";
import { EXIT_OK } from "./exit_codes.ts";
import { progressLine } from "./progress.ts";
import { statusLine } from "./status_line.ts";
import { stringifyTerminalSafe, terminalSafe } from "../text/mod.ts";
import { createPublisher, type PublishReport } from "../team/mod.ts";
import { openTeam } from "./team_config.ts";
import { VERSION } from "./mod.ts";
import { keeperOf, type KeepReport, listenerOf } from "../vault/mod.ts";

export const indexCommand: Command = {
  name: "index",
  summary: "sweep every source into the message index now and print coverage",
  usage: "intendant index [--json] [--team URL]",
  async run(argv: string[], io: CliIo): Promise<number> {
    const args = parseArgs(argv, { json: { type: "boolean" }, team: { type: "string" } });
    const cfg = resolveConfig(io.env, { cwd: io.cwd, team: stringFlag(args, "team") });
    const progress = progressLine(io.stderr, { isTty: io.isTty });
    // The lexicon is built at the end of the sweep (exact searches then skip what cannot match).
    // The vault keeps every listed transcript (lib/vault); this command waits for it.
    const keeper = keeperOf(cfg, {
      logger: (l) => io.stderr(`intendant: ${terminalSafe(l)}\n`),
    });
    const { store, indexer } = await createMessageIndex(cfg, {
      onProgress: progress.onProgress,
      lexicon: true,
      onListed: listenerOf(keeper),
    });
    const { quarantined } = await indexer.startup();
    // Trash entries past their keep time go with the rest of the startup maintenance; a
    // failure to remove one must not cost the sweep.
    await finishInterruptedDeletes({ stateRoot: cfg.stateRoot, logsDir: cfg.logsDir, store });
    await gcTrash({ stateRoot: cfg.stateRoot }).catch((err) =>
      io.stderr(`intendant: trash cleanup failed: ${terminalSafe((err as Error).message)}\n`)
    );
    const report = await indexer.sweep();
    await indexer.settled();
    progress.done();
    const vaulting = statusLine(io.stderr, { isTty: io.isTty });
    if (keeper) vaulting.update("keeping transcripts in the vault…");
    await keeper?.settled();
    vaulting.done();
    const vault = keeper?.last ?? null;
    const coverage = indexerCoverage(await store.readManifest(), {
      indexer,
      windowDays: cfg.messageSearch.windowDays,
      lastReport: report,
    });
    // Shards the startup check found damaged, quarantined, and this sweep re-derived.
    const rederived = quarantined.length + report.quarantined.length;
    const json = boolFlag(args, "json");
    if (!json) {
      io.stdout(formatCoverage(coverage, report, cfg.messageSearch.storeRoot, { rederived }));
      io.stdout(vaultLine(vault, cfg.vault.enabled));
    }
    let team: { machine: string; database: string; report: PublishReport } | null = null;
    if (cfg.team.url !== null) {
      const t = await openTeam(cfg, (w) => io.stderr(`intendant: ${terminalSafe(w)}\n`));
      try {
        const publishing = statusLine(io.stderr, { isTty: io.isTty });
        const publisher = createPublisher({
          db: t.db,
          store,
          machine: t.machine,
          binaryVersion: VERSION,
          onProgress: (done, total) =>
            publishing.update(`publishing to the team: ${done} of ${total} sessions`),
        });
        const r = await publisher.publish();
        publishing.done();
        team = { machine: t.machine, database: t.url.redacted, report: r };
        if (!json) io.stdout(formatPublish(team));
      } finally {
        await t.db.close();
      }
    }
    if (json) {
      io.stdout(stringifyTerminalSafe({ report, coverage, rederived, team, vault }) + "\n");
    }
    return EXIT_OK;
  },
};

/** One line on what this run's keep did (or that the vault is off). */
function vaultLine(r: KeepReport | null, enabled: boolean): string {
  if (!enabled) return "vault: off (INTENDANT_VAULT=off): deleted transcripts are not kept\n";
  if (!r) return "vault: nothing to keep\n";
  const kb = (n: number) => `${(n / 1024).toFixed(n < 10240 ? 1 : 0)} KiB`;
  const parts = [
    r.new ? `${r.new} new` : "",
    r.appended ? `${r.appended} appended` : "",
    r.rewritten ? `${r.rewritten} rewritten (old versions kept)` : "",
    r.gone ? `${r.gone} gone from their agent (kept here)` : "",
  ].filter(Boolean);
  const errs = r.errors.length ? `; ${r.errors.length} not kept (see above)` : "";
  return `vault: ${parts.length ? parts.join(", ") : "no change"} in ${r.sessions} sessions, ${
    kb(r.bytesWritten)
  } written${errs}; \`intendant vault status\` for the totals\n`;
}

/** One line on what the publish did. */
function formatPublish(t: { machine: string; database: string; report: PublishReport }): string {
  const r = t.report;
  const what = r.revision === null
    ? "nothing new to publish"
    : `published ${r.records_inserted} records of ${r.sessions_changed} sessions` +
      (r.sessions_deleted ? `, removed ${r.sessions_deleted} deleted sessions` : "") +
      (r.flags_flipped ? `, ${r.flags_flipped} supersession changes` : "") +
      ` in ${r.batches} transaction${r.batches === 1 ? "" : "s"} (team revision ${r.revision})`;
  const skipped = r.skipped_quarantined
    ? `; ${r.skipped_quarantined} damaged sessions left as last published until rebuilt`
    : "";
  return `team ${terminalSafe(t.database)} as machine ${
    terminalSafe(t.machine)
  }: ${what}${skipped}\n`;
}

function day(ms: number | null): string {
  return ms === null ? "-" : new Date(ms).toISOString().slice(0, 16).replace("T", " ");
}

/** The human table. */
export function formatCoverage(
  c: Coverage,
  r: SweepReport,
  storeRoot: string,
  o: { rederived?: number } = {},
): string {
  const rows = [[
    "source",
    "sessions",
    "records",
    "skipped",
    "gone",
    "oldest (UTC)",
    "newest (UTC)",
  ]];
  const notes: string[] = [];
  for (const [src, s] of Object.entries(c.sources)) {
    const skipped = Object.values(s.skipped).reduce((a, b) => a + b, 0);
    rows.push([
      src,
      String(s.sessions),
      String(s.records),
      String(skipped),
      String(s.source_gone),
      day(s.oldest_ts_ms),
      day(s.newest_ts_ms),
    ]);
    const reasons = Object.entries(s.skipped).map(([k, n]) => `${k} ${n}`).join(", ");
    if (reasons) notes.push(`  ${src} skipped: ${reasons}`);
    // Source errors quote paths and parser messages from the agent homes: untrusted text.
    for (const e of s.errors) notes.push(`  ${src} error: ${terminalSafe(e)}`);
  }
  // Damaged shards (F8): this run's startup check quarantined them and the sweep re-derived
  // them; what is left is lost (sources gone) or failed to re-derive (see the errors).
  if (o.rederived) {
    notes.push(`  damaged index shards found: ${o.rederived} (re-derived unless listed below)`);
  }
  if (c.degraded.count > 0) {
    const keys = c.degraded.sessions.map((d) => terminalSafe(d.session_key)).join(", ");
    const more = c.degraded.count - c.degraded.sessions.length;
    notes.push(
      `  damaged, not searchable: ${c.degraded.count} (${c.degraded.lost} lost: source files gone): ${keys}${
        more > 0 ? ` and ${more} more` : ""
      }`,
    );
  }
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((row) => row[i]!.length)));
  const table = rows.map((row) =>
    row.map((cell, i) => cell.padEnd(widths[i]!)).join("  ").trimEnd()
  ).join("\n");
  const window = c.window_days === null ? "forever" : `${c.window_days} days`;
  return `${table}\n${
    notes.length ? notes.join("\n") + "\n" : ""
  }swept in ${r.durationMs} ms; revision ${c.revision}; window ${window}; store ${
    terminalSafe(storeRoot)
  }\n`;
}
