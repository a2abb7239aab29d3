/**
 * `intendant delete SESSION`: deletes a native session for good (tombstone first, then
 * the directory; see lib/catalog/delete_session.ts).
 */
import { resolveConfig } from "../config.ts";
import { InvalidInputError } from "../errors.ts";
import { findSession } from "../session_log/mod.ts";
import { createMessageIndex } from "../message_search/mod.ts";
import { deleteNativeSession } from "../catalog/mod.ts";
import { parseArgs } from "./parse_args.ts";
import type { CliIo, Command } from "./io.ts";
import { EXIT_OK } from "./exit_codes.ts";

export const deleteCommand: Command = {
  name: "delete",
  summary: "delete a native session and tombstone it in the message index",
  usage: "intendant delete SESSION",
  async run(argv: string[], io: CliIo): Promise<number> {
    const args = parseArgs(argv, {});
    const [id] = args.positionals;
    if (!id) throw new InvalidInputError("Missing SESSION (an id or unique prefix)");
    const cfg = resolveConfig(io.env, { cwd: io.cwd });
    const found = await findSession(cfg.logsDir, id);
    const { store } = await createMessageIndex(cfg);
    await deleteNativeSession({ store, logsDir: cfg.logsDir }, found.meta.session_id, found.dir);
    io.stdout(`deleted ${found.meta.session_id}\n`);
    return EXIT_OK;
  },
};
