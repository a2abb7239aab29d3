/**
 * `intendant delete SESSION [--yes]`: moves a native session to the trash (restorable
 * with `intendant restore` for TRASH_KEEP_DAYS; see lib/catalog/trash_layout.ts).
 * Nothing is destroyed by accident:
 *  - SESSION is a full id or a prefix of at least MIN_PREFIX_CHARS naming one session;
 *    a shorter prefix is refused (exit 2) with the sessions it matches;
 *  - on a terminal it shows what it will delete and asks; only "y" or "yes" proceeds
 *    (anything else, or end of input, exits 1 with nothing done);
 *  - without a terminal on stdin it needs --yes (scripts), else exits 2 having read the
 *    logs directory only: neither the session nor the index is touched.
 */
import { resolveConfig } from "../config.ts";
import { InvalidInputError } from "../errors.ts";
import { createMessageIndex } from "../message_search/mod.ts";
import {
  deleteNativeSession,
  finishInterruptedDeletes,
  messageCount,
  resolveNativeForDelete,
  sessionFacts,
  ShortPrefixError,
  TRASH_KEEP_DAYS,
} from "../catalog/mod.ts";
import { formatBytes, terminalSafe } from "../text/mod.ts";
import { join } from "node:path";
import { boolFlag, parseArgs } from "./parse_args.ts";
import type { CliIo, Command } from "./io.ts";
import { EXIT_FAILURE, EXIT_OK, EXIT_USAGE } from "./exit_codes.ts";
import { reportShortPrefix, sessionLabel, utcMinute } from "./cmd_trash.ts";

export const deleteCommand: Command = {
  name: "delete",
  summary: `move a native session to the trash (restorable for ${TRASH_KEEP_DAYS} days)`,
  usage: `intendant delete SESSION [--yes]

  SESSION   the full session id, or a unique prefix of at least 8 characters
  --yes     do not ask (needed when stdin is not a terminal)`,
  async run(argv: string[], io: CliIo): Promise<number> {
    const args = parseArgs(argv, { yes: { type: "boolean", short: "y" } });
    const [id, ...extra] = args.positionals;
    if (!id) {
      throw new InvalidInputError("Missing SESSION (a full id or a prefix of 8+ characters)");
    }
    if (extra.length) throw new InvalidInputError(`Unexpected argument "${extra[0]}"`);
    const cfg = resolveConfig(io.env, { cwd: io.cwd });
    let target: { sessionId: string; dir: string };
    try {
      target = await resolveNativeForDelete(cfg.logsDir, id);
    } catch (err) {
      if (!(err instanceof ShortPrefixError)) throw err;
      return await reportShortPrefix(io, {
        err,
        verb: "delete",
        label: async (c) => sessionLabel(await sessionFacts(join(cfg.logsDir, c), c)),
      });
    }
    const yes = boolFlag(args, "yes");
    const ask = io.stdinIsTty === true && io.readLine !== undefined;
    if (!yes && !ask) {
      io.stderr(
        `intendant: stdin is not a terminal, so nothing was deleted: pass --yes to move ` +
          `session "${target.sessionId}" to the trash\n`,
      );
      return EXIT_USAGE;
    }
    const { store } = await createMessageIndex(cfg);
    const deps = { stateRoot: cfg.stateRoot, logsDir: cfg.logsDir, store };
    // This very session may be a delete a crash cut short (tombstoned, still in logs/):
    // finishing it is what was asked (trash_recover.ts).
    if ((await finishInterruptedDeletes(deps)).includes(target.sessionId)) {
      io.stdout(
        `moved ${target.sessionId} to the trash (finishing a delete that was interrupted); ` +
          `undo with: intendant restore ${target.sessionId}\n`,
      );
      return EXIT_OK;
    }
    if (!yes) {
      const facts = await sessionFacts(target.dir, target.sessionId);
      const count = await messageCount(store, target.sessionId, target.dir);
      const rows: [string, string][] = [
        ["id", target.sessionId],
        ["name", sessionLabel(facts)],
        ["project", terminalSafe(facts.project ?? "-")],
        ["status", terminalSafe(facts.status ?? "-")],
        ["created", `${utcMinute(facts.created_ms)} UTC`],
        ["messages", String(count)],
        ["size", formatBytes(facts.size_bytes)],
      ];
      io.stderr(
        `This session moves to the trash (restorable for ${TRASH_KEEP_DAYS} days):\n` +
          rows.map(([k, v]) => `  ${k.padEnd(9)}${v}\n`).join("") +
          "Move this session to the trash? [y/N] ",
      );
      const answer = (await io.readLine!())?.trim().toLowerCase() ?? "";
      if (answer !== "y" && answer !== "yes") {
        io.stderr("Nothing deleted\n");
        return EXIT_FAILURE;
      }
    }
    const t = await deleteNativeSession(deps, target.sessionId, target.dir);
    io.stdout(
      `moved ${t.session_id} to the trash (kept until ${utcMinute(t.expires_at_ms)} UTC); ` +
        `undo with: intendant restore ${t.session_id}\n`,
    );
    return EXIT_OK;
  },
};
