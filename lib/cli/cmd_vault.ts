/**
 * `intendant vault status [--json]` and `intendant vault restore SESSION [--to DIR]
 * [--json]`: what the transcript vault (lib/vault) holds, and putting a session's files
 * back. `status` prints one row per source — sessions (and how many are gone from their
 * agent, so kept only here), files, versions, bytes kept against the bytes they restore —
 * and, for each source present, what a restore gives back. `restore` writes the last
 * kept version of every file of the session to the exact path its agent reads (refusing
 * to overwrite anything, and refusing a path outside the source's current home), or
 * under DIR with `--to`, then prints the agent's resume command. A session of a database
 * source (OpenCode, Goose) is kept as an export of its rows: without `--to` restore
 * refuses in one line (exit 1), with `--to` it writes `<DIR>/<source>-<id>.json`. SESSION is a session
 * key, a session id, or a unique prefix of either.
 * Every path and id printed came from an agent's files: terminal-safe.
 */
import { resolve } from "node:path";
import { resolveConfig } from "../config.ts";
import { InvalidInputError } from "../errors.ts";
import { createMessageIndex, type Source, SOURCE_TABLE } from "../message_search/mod.ts";
import { resumeCommand } from "../catalog/mod.ts";
import { formatBytes, stringifyTerminalSafe, terminalSafe } from "../text/mod.ts";
import { restoreKept, type VaultFigures, vaultReport } from "../vault/mod.ts";
import { boolFlag, parseArgs, stringFlag } from "./parse_args.ts";
import type { CliIo, Command } from "./io.ts";
import { EXIT_OK } from "./exit_codes.ts";

const USAGE = `intendant vault status [--json]
intendant vault restore SESSION [--to DIR] [--json]

  status    what the vault keeps, per source (INTENDANT_VAULT=off turns keeping off)
  restore   write a kept session's files back where its agent reads them (never over an
            existing file), or under DIR with --to; SESSION is a session key, a session
            id, or a unique prefix of either`;

function day(ms: number | null): string {
  return ms === null ? "-" : new Date(ms).toISOString().slice(0, 10);
}

function row(name: string, f: VaultFigures): string[] {
  return [
    name,
    String(f.sessions),
    String(f.gone),
    String(f.files),
    String(f.versions),
    formatBytes(f.bytes_kept),
    formatBytes(f.bytes_original),
    f.bytes_original ? `${(f.bytes_kept / f.bytes_original).toFixed(3)}×` : "-",
    day(f.oldest_kept_ms),
  ];
}

function table(rows: string[][]): string {
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)));
  return rows.map((r) => r.map((c, i) => c.padEnd(widths[i]!)).join("  ").trimEnd()).join("\n");
}

async function status(io: CliIo, json: boolean): Promise<number> {
  const cfg = resolveConfig(io.env, { cwd: io.cwd });
  const st = await vaultReport(cfg);
  const { budget, risks, damaged } = st;
  const last = budget.last;
  if (json) {
    io.stdout(stringifyTerminalSafe(st) + "\n");
    return EXIT_OK;
  }
  const head = [
    "source",
    "sessions",
    "gone",
    "files",
    "versions",
    "kept",
    "originals",
    "ratio",
    "first kept",
  ];
  const rows = [head, ...Object.entries(st.by_source).map(([s, f]) => row(s, f))];
  if (rows.length > 2) rows.push(row("total", st.total));
  const lines = [
    `vault ${terminalSafe(cfg.vault.dir)}${cfg.vault.enabled ? "" : " (off: INTENDANT_VAULT=off)"}`,
  ];
  if (st.total.sessions === 0) {
    lines.push(
      cfg.vault.enabled
        ? "nothing kept yet: the daemon (or `intendant index`) keeps every transcript it indexes"
        : "nothing kept",
    );
  } else {
    lines.push(table(rows));
    const pct = Math.round((100 * budget.used_bytes) / budget.max_bytes);
    lines.push(
      `budget ${formatBytes(budget.max_bytes)} (INTENDANT_VAULT_MAX_BYTES): ${
        formatBytes(budget.used_bytes)
      } used (${pct}%)`,
    );
    if (last) {
      lines.push(
        `the budget last bit ${day(last.last_ms)}: ${last.versions} old version(s) pruned in all` +
          ` (${last.gone_files} of deleted files, ${last.sessions} whole session(s), ${
            formatBytes(last.bytes_freed)
          } freed)${last.over ? "; only current copies are left, still over" : ""}`,
      );
    }
    lines.push("", "what a restore gives back:");
    for (const s of Object.keys(st.by_source)) {
      const r = SOURCE_TABLE[s as Source];
      if (r) lines.push(`  ${r.label}: ${r.keep.restore}`);
    }
  }
  const dbRows = Object.values(SOURCE_TABLE).filter((r) => r.keep.kind === "database");
  lines.push(
    `kept as exports of their rows: ${
      dbRows.map((r) => r.label).join(", ")
    } (their sessions are rows of a database, which cannot be restored file by file: ` +
      "`vault restore SESSION --to DIR` writes the export); Intendant's own sessions live in the state root",
  );
  for (const r of risks) lines.push(r.line);
  for (const d of damaged) lines.push(`damaged catalog, left in place: ${terminalSafe(d)}`);
  io.stdout(lines.join("\n") + "\n");
  return EXIT_OK;
}

async function restore(
  io: CliIo,
  o: { query: string; to: string | null; json: boolean },
): Promise<number> {
  const cfg = resolveConfig(io.env, { cwd: io.cwd });
  const to = o.to === null ? null : resolve(io.cwd, o.to);
  const { catalog, files } = await restoreKept(cfg, { query: o.query, to });
  // The project a resume starts in, from the index when it still knows the session.
  const { store } = await createMessageIndex(cfg);
  const entry = (await store.readManifest()).sessions[catalog.key];
  const resume = resumeCommand({
    source: catalog.source as Source,
    sessionId: catalog.session_id,
    project: entry?.meta.project ?? null,
    files: files.map((f) => f.path),
  });
  if (o.json) {
    io.stdout(
      stringifyTerminalSafe({ key: catalog.key, files, resume: to ? null : resume }) + "\n",
    );
    return EXIT_OK;
  }
  for (const f of files) {
    io.stdout(`restored ${terminalSafe(f.path)} (${formatBytes(f.bytes)})\n`);
  }
  const note = SOURCE_TABLE[catalog.source as Source]?.keep.restore;
  if (!to) {
    io.stdout(`resume it with: ${terminalSafe(resume)}\n`);
    if (note) io.stdout(`${SOURCE_TABLE[catalog.source as Source]!.label}: ${note}\n`);
  }
  return EXIT_OK;
}

export const vaultCommand: Command = {
  name: "vault",
  summary: "what the transcript vault keeps, and restoring a deleted session from it",
  usage: USAGE,
  async run(argv: string[], io: CliIo): Promise<number> {
    const args = parseArgs(argv, { json: { type: "boolean" }, to: { type: "string" } });
    const [sub, ...rest] = args.positionals;
    const json = boolFlag(args, "json");
    if (sub === "status") {
      if (rest.length) throw new InvalidInputError(`Unexpected argument "${rest[0]}"`);
      if (stringFlag(args, "to") !== undefined) {
        throw new InvalidInputError(`Flag "--to" belongs to "vault restore"`);
      }
      return await status(io, json);
    }
    if (sub === "restore") {
      const [query, ...extra] = rest;
      if (!query) throw new InvalidInputError("Missing SESSION (a session key, id or prefix)");
      if (extra.length) throw new InvalidInputError(`Unexpected argument "${extra[0]}"`);
      return await restore(io, { query, to: stringFlag(args, "to") ?? null, json });
    }
    throw new InvalidInputError(
      sub
        ? `Unknown vault command "${sub}": use "status" or "restore"`
        : `Missing a vault command: use "status" or "restore"`,
    );
  },
};
