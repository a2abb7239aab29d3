/**
 * `intendant demo`: writes one short, complete session with every kind of artifact
 * (task, assistant prose, a command with output, reasoning, summaries) and prints where.
 * A smoke test of the log writer a user can run in a second.
 */
import { resolveConfig } from "../config.ts";
import { SessionLog } from "../session_log/mod.ts";
import { parseArgs, stringFlag } from "./parse_args.ts";
import type { CliIo, Command } from "./io.ts";
import { EXIT_OK } from "./exit_codes.ts";

export const demoCommand: Command = {
  name: "demo",
  summary: "write a short demo session log and print its directory",
  usage: "intendant demo [--log-file DIR]",
  async run(argv: string[], io: CliIo): Promise<number> {
    const args = parseArgs(argv, { "log-file": { type: "string" } });
    const cfg = resolveConfig(io.env, { cwd: io.cwd, logFile: stringFlag(args, "log-file") });
    const task = "Show me what a session log looks like";
    const log = await SessionLog.create({
      logsDir: cfg.logsDir,
      pinnedDir: cfg.logFile,
      tmpDir: cfg.tmpDir,
      logger: (l) => io.stderr(l + "\n"),
      meta: { projectRoot: cfg.cwd, task, name: "Demo session" },
    });
    log.sessionStarted({
      task,
      projectRoot: cfg.cwd,
      round: 1,
      provider: "demo",
      autonomy: "headless",
      resumed: false,
    });
    log.conversationMessageUser(1, { seq: 1, provenance: "task", text: task });
    await log.turnStart(1, "demo");
    log.reasoningContent(1, "The user wants to see the layout; list the directory.");
    log.modelResponseWithMessage(1, "Listing the session directory for you.", {
      seq: 2,
      hasToolCalls: true,
    });
    log.agentInput(1, [{ exec: "ls", nonce: "demo1" }]);
    log.agentOutput(1, { stdout: "session.jsonl\nturns\n", stderr: "", exitCodes: [0] });
    log.turnEnd(1, { commands: 1, durationMs: 1 });
    await log.finish("completed");
    io.stdout(`session ${log.sessionId}\ndir ${log.dir}\n`);
    return EXIT_OK;
  },
};
