/**
 * `intendant restore SESSION`: moves a session from the trash back to
 * `<state-root>/logs/<id>/` and lifts its index tombstone, so the next sweep (the
 * daemon's, or `intendant index`) makes it searchable again. SESSION is a full id or a
 * prefix of at least 8 characters of an entry in the trash (`intendant trash` lists
 * them). Refuses, touching nothing, when `logs/<id>` already exists (exit 1).
 */
import { join } from "node:path";
import { resolveConfig } from "../config.ts";
import { InvalidInputError } from "../errors.ts";
import { createMessageIndex } from "../message_search/mod.ts";
import {
  finishInterruptedDeletes,
  listTrash,
  restoreNativeSession,
  ShortPrefixError,
} from "../catalog/mod.ts";
import { terminalSafe } from "../text/mod.ts";
import { parseArgs } from "./parse_args.ts";
import type { CliIo, Command } from "./io.ts";
import { EXIT_OK } from "./exit_codes.ts";
import { reportShortPrefix, sessionLabel } from "./cmd_trash.ts";

export const restoreCommand: Command = {
  name: "restore",
  summary: "bring a deleted session back from the trash",
  usage: `intendant restore SESSION

  SESSION   the full id, or a unique prefix of at least 8 characters, of a session in
            the trash (see \`intendant trash\`)`,
  async run(argv: string[], io: CliIo): Promise<number> {
    const args = parseArgs(argv, {});
    const [id, ...extra] = args.positionals;
    if (!id) {
      throw new InvalidInputError("Missing SESSION (a full id or a prefix of 8+ characters)");
    }
    if (extra.length) throw new InvalidInputError(`Unexpected argument "${extra[0]}"`);
    const cfg = resolveConfig(io.env, { cwd: io.cwd });
    const { store } = await createMessageIndex(cfg);
    const deps = { stateRoot: cfg.stateRoot, logsDir: cfg.logsDir, store };
    // An interrupted delete is finished first, so its session can be restored like any other.
    await finishInterruptedDeletes(deps);
    try {
      const r = await restoreNativeSession(deps, id);
      const how = r.repaired
        ? `${r.session_id} was still in ${terminalSafe(join(cfg.logsDir, ""))} ` +
          "(an interrupted delete); " +
          "its search tombstone is lifted"
        : `restored ${r.session_id} to ${terminalSafe(r.dir)}`;
      io.stdout(`${how}; the next index sweep makes it searchable again\n`);
      return EXIT_OK;
    } catch (err) {
      if (!(err instanceof ShortPrefixError)) throw err;
      const labels = new Map((await listTrash(deps)).map((e) => [e.session_id, sessionLabel(e)]));
      return await reportShortPrefix(io, {
        err,
        verb: "restore",
        label: (c) => Promise.resolve(labels.get(c) ?? "(untitled)"),
      });
    }
  },
};
