/**
 * `intendant serve` (the default command): serves the dashboard and the API on
 * 127.0.0.1, runs the indexer, prints the tokenized URL, and shuts down cleanly on
 * SIGINT/SIGTERM (daemon.json removed, indexer stopped).
 */
import { resolveConfig } from "../config.ts";
import { startDaemon } from "../server/mod.ts";
import { numberFlag, parseArgs } from "./parse_args.ts";
import type { CliIo, Command } from "./io.ts";
import { EXIT_OK } from "./exit_codes.ts";
import { UI_BUNDLE } from "../../ui/gen/bundle.ts";

export const serveCommand: Command = {
  name: "serve",
  summary: "serve the dashboard and API on 127.0.0.1 and keep the message index fresh (default)",
  usage: "intendant serve [--port N]   (0 picks a free port)",
  async run(argv: string[], io: CliIo): Promise<number> {
    const args = parseArgs(argv, { port: { type: "number" } });
    const port = numberFlag(args, "port");
    if (port !== undefined && (!Number.isInteger(port) || port < 0 || port > 65535)) {
      throw new RangeError(`Invalid --port "${port}": expected 0-65535`);
    }
    const cfg = resolveConfig(io.env, { cwd: io.cwd, port });
    // Signals are taken before the daemon starts: daemon.json appears inside startDaemon,
    // and a SIGTERM landing between that and a later listener killed the process outright
    // (exit 143, daemon.json left behind for the next client to trip over).
    let daemon: Awaited<ReturnType<typeof startDaemon>> | null = null;
    let stopRequested = false;
    const stop = () => {
      stopRequested = true;
      if (daemon) void daemon.shutdown();
    };
    const signals: Deno.Signal[] = io.os === "windows" ? ["SIGINT"] : ["SIGINT", "SIGTERM"];
    for (const s of signals) Deno.addSignalListener(s, stop);
    try {
      daemon = await startDaemon(cfg, {
        logger: (l) => io.stderr(l + "\n"),
        // The dashboard is compiled into the program (build.ts): no UI file is read at run time.
        ui: UI_BUNDLE,
      });
      io.stdout(
        `Intendant is serving ${daemon.url}\nOpen: ${daemon.url}?token=${daemon.token}\n(the token is also in ${cfg.daemonJsonPath})\n`,
      );
      if (stopRequested) void daemon.shutdown();
      await daemon.finished;
      await daemon.shutdown();
    } finally {
      for (const s of signals) Deno.removeSignalListener(s, stop);
    }
    return EXIT_OK;
  },
};
