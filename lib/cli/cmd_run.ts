/**
 * `intendant run`: one headless session round with the mock provider. Validates every
 * input (flags, the mock script, the parent) BEFORE creating anything, so a bad
 * invocation never leaves a half-written session. Prints the session id and directory
 * first (so `intendant ctl` can find a waiting session), installs the daemon.log tee and
 * the crash hook for this controller process, and turns SIGINT/SIGTERM into a clean
 * "interrupted" ending.
 */
import { resolve } from "node:path";
import { resolveConfig } from "../config.ts";
import { InvalidInputError } from "../errors.ts";
import {
  findSession,
  installCrashHook,
  installDaemonLogTee,
  mostRecentForProject,
  normalizeName,
  registerCrashLog,
  type SessionLogOptions,
} from "../session_log/mod.ts";
import {
  createMockProvider,
  loadMockScript,
  mockScriptHelp,
  type Relationship,
  resumeSession,
  runRound,
  type StartedSession,
  startSession,
} from "../runner/mod.ts";
import { boolFlag, numberFlag, parseArgs, stringFlag } from "./parse_args.ts";
import type { CliIo, Command } from "./io.ts";
import { EXIT_OK, EXIT_SESSION_FAILED } from "./exit_codes.ts";

// The script format is rendered from the script schema (lib/runner/mock_script.ts), so the
// help cannot drift from what the parser accepts.
const USAGE = `intendant run [--provider mock] [--mock-script FILE] [--log-file DIR] [--project DIR]
              [--name NAME] [--continue | --resume ID_OR_PREFIX]
              [--parent ID --relationship side|subagent|fork] [--context-window TOKENS] TASK

Without --mock-script the mock answers from the task: it runs \`pwd\`, then says "Done.".

${mockScriptHelp().trimEnd()}`;

const RELATIONSHIPS: Relationship[] = ["side", "subagent", "fork"];

export const runCommandCli: Command = {
  name: "run",
  summary: "run a headless agent session (mock provider) and print its id and directory",
  usage: USAGE,
  async run(argv: string[], io: CliIo): Promise<number> {
    const args = parseArgs(argv, {
      provider: { type: "string" },
      "mock-script": { type: "string" },
      "log-file": { type: "string" },
      project: { type: "string" },
      name: { type: "string" },
      continue: { type: "boolean" },
      resume: { type: "string" },
      parent: { type: "string" },
      relationship: { type: "string" },
      "context-window": { type: "number" },
    });
    const task = args.positionals.join(" ").trim();
    if (!task) throw new InvalidInputError("Missing TASK: say what the session should do");
    const providerName = stringFlag(args, "provider") ?? "mock";
    if (providerName !== "mock") {
      throw new InvalidInputError(`Unknown provider "${providerName}": only "mock" is built in`);
    }
    const resumeId = stringFlag(args, "resume");
    const cont = boolFlag(args, "continue");
    if (cont && resumeId) throw new InvalidInputError(`Give --continue or --resume, not both`);
    const parentId = stringFlag(args, "parent");
    const relationship = stringFlag(args, "relationship");
    if ((parentId === undefined) !== (relationship === undefined)) {
      throw new InvalidInputError(`--parent and --relationship go together`);
    }
    if (relationship !== undefined && !RELATIONSHIPS.includes(relationship as Relationship)) {
      throw new InvalidInputError(
        `Invalid --relationship "${relationship}": expected side, subagent or fork`,
      );
    }
    if ((cont || resumeId) && (parentId || stringFlag(args, "log-file"))) {
      throw new InvalidInputError(
        `--continue/--resume reopen an existing session: --parent and --log-file do not apply`,
      );
    }
    const cfg = resolveConfig(io.env, { cwd: io.cwd, logFile: stringFlag(args, "log-file") });
    const projectRoot = resolve(cfg.cwd, stringFlag(args, "project") ?? ".");
    const scriptPath = stringFlag(args, "mock-script");
    const script = scriptPath ? await loadMockScript(resolve(cfg.cwd, scriptPath)) : null;
    const provider = createMockProvider(script);
    const contextWindow = numberFlag(args, "context-window") ?? null;
    const logOptions: SessionLogOptions = {
      logsDir: cfg.logsDir,
      pinnedDir: cfg.logFile,
      tmpDir: cfg.tmpDir,
      logger: (l) => io.stderr(l + "\n"),
      logMessagesJson: cfg.logMessagesJson,
      contextSnapshotKeepAll: cfg.contextSnapshotKeepAll,
    };
    const target = cont
      ? await mostRecentForProject(cfg.logsDir, projectRoot)
      : resumeId
      ? await findSession(cfg.logsDir, resumeId)
      : null;
    if (cont && !target) {
      throw new InvalidInputError(`No earlier session for project "${projectRoot}" to continue`);
    }
    const parent = parentId
      ? {
        session: await findSession(cfg.logsDir, parentId),
        relationship: relationship as Relationship,
      }
      : null;

    const started: StartedSession = target
      ? await resumeSession(target, {
        logOptions,
        provider,
        task,
        contextWindow,
        name: normalizeName(stringFlag(args, "name")),
      })
      : await startSession({
        logOptions,
        provider,
        task,
        projectRoot,
        name: normalizeName(stringFlag(args, "name")),
        parent,
        contextWindow,
        pins: { mock_script: scriptPath ? resolve(cfg.cwd, scriptPath) : null },
      });
    const { log, conversation } = started;
    io.stdout(`session ${log.sessionId}\ndir ${log.dir}\n`);
    const tee = installDaemonLogTee({
      dir: log.dir,
      os: io.os,
      terminal: { stdout: io.stdout, stderr: io.stderr },
    });
    registerCrashLog(log);
    if (io.exit) installCrashHook({ exit: io.exit, report: (l) => io.stderr(l + "\n") });

    const abort = new AbortController();
    const onSignal = () => abort.abort();
    const signals: Deno.Signal[] = io.os === "windows" ? ["SIGINT"] : ["SIGINT", "SIGTERM"];
    for (const s of signals) Deno.addSignalListener(s, onSignal);
    let status: "completed" | "failed" | "interrupted";
    try {
      status = await runRound({
        log,
        conversation,
        provider,
        task,
        projectRoot: log.meta.project_root,
        signal: abort.signal,
        notify: (l) => io.stderr(l + "\n"),
      });
    } catch (err) {
      log.error(`Session failed: ${err instanceof Error ? err.message : String(err)}`);
      status = "failed";
    } finally {
      for (const s of signals) Deno.removeSignalListener(s, onSignal);
    }
    await log.finish(status, { reason: status === "interrupted" ? "signal" : undefined });
    registerCrashLog(null);
    await tee.drain();
    if (status !== "completed") io.stderr(`intendant: session ${log.sessionId} ended ${status}\n`);
    return status === "completed" ? EXIT_OK : EXIT_SESSION_FAILED;
  },
};
