/**
 * `intendant delete SESSION`: deletes a native session for good. The index shard is
 * tombstoned FIRST (so even if removing the directory fails halfway, the session can
 * never reappear in search from a stale source), then the directory is removed.
 */
import { resolveConfig } from "../config.ts";
import { InvalidInputError } from "../errors.ts";
import { findSession } from "../session_log/mod.ts";
import { createMessageIndex, sessionKey } from "../message_search/mod.ts";
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
    await deleteNativeSession(cfg, found.meta.session_id, found.dir);
    io.stdout(`deleted ${found.meta.session_id}\n`);
    return EXIT_OK;
  },
};

/** Tombstones then removes a native session (shared by the CLI and the API). */
export async function deleteNativeSession(
  cfg: ReturnType<typeof resolveConfig>,
  sessionId: string,
  dir: string,
): Promise<void> {
  const { store } = await createMessageIndex(cfg);
  await store.deleteSession(sessionKey("intendant", sessionId));
  await Deno.remove(dir, { recursive: true });
}
