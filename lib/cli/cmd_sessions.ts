/**
 * `intendant sessions [QUERY]`: native and external sessions, newest first, with names
 * (meta and overlay), source, project and the resume command. Every listed string may come
 * from a transcript (titles, projects, ids, names): printed through lib/text only.
 */
import { resolveConfig } from "../config.ts";
import { createMessageIndex, type Source, SOURCES } from "../message_search/mod.ts";
import { finishInterruptedDeletes, listSessions } from "../catalog/mod.ts";
import { InvalidInputError } from "../errors.ts";
import { boolFlag, numberFlag, parseArgs, stringFlag } from "./parse_args.ts";
import type { CliIo, Command } from "./io.ts";
import { EXIT_OK } from "./exit_codes.ts";
import { stringifyTerminalSafe, terminalSafe } from "../text/mod.ts";

/** A listed field as one terminal-safe line ("" when absent). */
function safe(v: string | null | undefined): string {
  return terminalSafe(v ?? "");
}

export const sessionsCommand: Command = {
  name: "sessions",
  summary: "list native and external sessions, newest first, with names and resume commands",
  usage: "intendant sessions [QUERY] [--json] [--limit N] [--offset N] [--source S[,S]]",
  async run(argv: string[], io: CliIo): Promise<number> {
    const args = parseArgs(argv, {
      json: { type: "boolean" },
      limit: { type: "number" },
      offset: { type: "number" },
      source: { type: "string" },
    });
    const src = stringFlag(args, "source");
    const source = src?.split(",").map((s) => s.trim()).filter(Boolean) as Source[] | undefined;
    for (const s of source ?? []) {
      if (!SOURCES.includes(s)) {
        throw new InvalidInputError(`Invalid --source "${s}": expected ${SOURCES.join(", ")}`);
      }
    }
    const cfg = resolveConfig(io.env, { cwd: io.cwd });
    const { store } = await createMessageIndex(cfg);
    // A delete a crash cut short is finished first: no listed session is unsearchable (H9).
    await finishInterruptedDeletes({ stateRoot: cfg.stateRoot, logsDir: cfg.logsDir, store });
    const r = await listSessions({ logsDir: cfg.logsDir, store, namesPath: cfg.sessionNamesPath }, {
      limit: numberFlag(args, "limit") ?? 50,
      offset: numberFlag(args, "offset") ?? 0,
      source,
      q: args.positionals.join(" ") || undefined,
    });
    if (boolFlag(args, "json")) {
      io.stdout(stringifyTerminalSafe(r) + "\n");
      return EXIT_OK;
    }
    for (const s of r.sessions) {
      const when = s.updated_ms
        ? new Date(s.updated_ms).toISOString().slice(0, 16).replace("T", " ")
        : "-";
      io.stdout(
        `${when}  ${safe(s.source).padEnd(11)} ${safe(s.session_id)}  ${safe(s.name ?? s.title)}\n`,
      );
      io.stdout(
        `    ${safe(s.project)}${
          s.status ? `  [${safe(s.status)}]` : ""
        }  ${s.message_count} messages  resume: ${safe(s.resume_command)}\n`,
      );
    }
    io.stdout(
      `${r.sessions.length} of ${r.total} sessions${
        r.next_offset !== null ? ` (more with --offset ${r.next_offset})` : ""
      }\n`,
    );
    return EXIT_OK;
  },
};
