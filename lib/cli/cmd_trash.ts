/**
 * `intendant trash [--json]`: what is in the trash (id, name or title, when deleted,
 * when the GC removes it, size), most recent deletion first. Also the small formatting
 * helpers the delete and restore commands share with it. Names, titles and projects come
 * from session meta files: untrusted, printed only through terminalSafe.
 */
import { resolveConfig } from "../config.ts";
import { createMessageIndex } from "../message_search/mod.ts";
import {
  finishInterruptedDeletes,
  listTrash,
  MIN_PREFIX_CHARS,
  type ShortPrefixError,
  TRASH_KEEP_DAYS,
  trashDirOf,
} from "../catalog/mod.ts";
import { formatBytes, stringifyTerminalSafe, terminalSafe } from "../text/mod.ts";
import { boolFlag, parseArgs } from "./parse_args.ts";
import type { CliIo, Command } from "./io.ts";
import { EXIT_OK, EXIT_USAGE } from "./exit_codes.ts";

/** `YYYY-MM-DD HH:MM` in UTC, or "-". */
export function utcMinute(ms: number | null): string {
  return ms === null ? "-" : new Date(ms).toISOString().slice(0, 16).replace("T", " ");
}

/** A session's label for a terminal: its name, else its title, else "(untitled)". */
export function sessionLabel(f: { name: string | null; title: string | null }): string {
  return terminalSafe(f.name ?? f.title ?? "(untitled)");
}

/**
 * The refusal of a short prefix: one error line, then the sessions it matches (at most
 * 20, labelled by `label`), then a hint. Returns EXIT_USAGE. The prefix passed the id
 * grammar, so it is safe to print.
 */
export async function reportShortPrefix(
  io: CliIo,
  o: { err: ShortPrefixError; verb: string; label: (id: string) => Promise<string> },
): Promise<number> {
  const { err, verb, label } = o;
  const shown = err.candidates.slice(0, 20);
  const lines = [
    `intendant: Refusing to ${verb} by the prefix "${err.prefix}": give the full id or at ` +
    `least ${MIN_PREFIX_CHARS} characters`,
  ];
  if (err.candidates.length === 0) lines.push(`"${err.prefix}" matches no session`);
  else {
    const n = err.candidates.length;
    lines.push(`"${err.prefix}" matches ${n} session${n === 1 ? "" : "s"}:`);
    for (const id of shown) lines.push(`  ${id}  ${await label(id)}`);
    if (n > shown.length) lines.push(`  … and ${n - shown.length} more`);
  }
  lines.push("hint: give the full session id (`intendant sessions` lists them)");
  io.stderr(lines.join("\n") + "\n");
  return EXIT_USAGE;
}

export const trashCommand: Command = {
  name: "trash",
  summary: `list deleted sessions (restorable for ${TRASH_KEEP_DAYS} days)`,
  usage: "intendant trash [--json]",
  async run(argv: string[], io: CliIo): Promise<number> {
    const args = parseArgs(argv, { json: { type: "boolean" } });
    if (args.positionals.length > 0) {
      io.stderr(`intendant: trash takes no arguments\nhint: see \`intendant trash --help\`\n`);
      return EXIT_USAGE;
    }
    const cfg = resolveConfig(io.env, { cwd: io.cwd });
    // An interrupted delete is finished first, so the trash lists it (H9).
    const { store } = await createMessageIndex(cfg);
    await finishInterruptedDeletes({ stateRoot: cfg.stateRoot, logsDir: cfg.logsDir, store });
    const entries = await listTrash({ stateRoot: cfg.stateRoot });
    if (boolFlag(args, "json")) {
      io.stdout(stringifyTerminalSafe({ trash_dir: trashDirOf(cfg.stateRoot), entries }) + "\n");
      return EXIT_OK;
    }
    if (entries.length === 0) {
      io.stdout("The trash is empty\n");
      return EXIT_OK;
    }
    io.stdout("deleted (UTC)     expires (UTC)     size        session\n");
    for (const e of entries) {
      io.stdout(
        `${utcMinute(e.deleted_at_ms)}  ${utcMinute(e.expires_at_ms)}  ` +
          `${formatBytes(e.size_bytes).padEnd(10)}  ${e.session_id}  ${sessionLabel(e)}\n`,
      );
    }
    const n = entries.length;
    io.stdout(
      `${n} session${n === 1 ? "" : "s"} in the trash; \`intendant restore ID\` brings one back\n`,
    );
    return EXIT_OK;
  },
};
