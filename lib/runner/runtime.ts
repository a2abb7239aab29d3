/**
 * The runtime: each command is a real `sh -c` subprocess in the project directory with
 * INTENDANT_LOG_DIR set to the session dir. Output streams into the per-command runtime
 * logs as it arrives (so a crash keeps what was produced) while a capped copy is kept for
 * the turn files and the conversation. Deno has no pty without FFI, so `pty: true` merges
 * stderr into stdout the way a terminal would; a pty result over 10 KiB keeps its full
 * text in `{nonce}_{random}_pty.log` and enters the conversation cut at 10 KiB.
 */
import { writeAllSync } from "../durable/mod.ts";
import { PTY_FULL_LOG_THRESHOLD_BYTES, type SessionLog } from "../session_log/mod.ts";
import type { MockCommand } from "./mock_script.ts";

/** Kept in memory per stream for turn files and the conversation; the runtime logs hold all. */
export const CAPTURE_CAP_BYTES = 1024 * 1024;
export const DEFAULT_COMMAND_TIMEOUT_MS = 10 * 60_000;

/** What one command produced. */
export interface CommandResult {
  nonce: string;
  exitCode: number;
  stdout: string;
  stderr: string;
  /** The text that enters the conversation as tool output. */
  toolText: string;
  ptyLog: string | null;
}

/** Options for {@link runCommand}. */
export interface RunCommandOptions {
  log: SessionLog;
  turn: number;
  cwd: string;
  signal: AbortSignal;
}

/** Runs one command with approvals recorded (auto-approved: headless mode). */
export async function runCommand(cmd: MockCommand, o: RunCommandOptions): Promise<CommandResult> {
  const { log, turn } = o;
  const approvalId = crypto.randomUUID();
  log.approval(turn, { approvalId, command: cmd.exec, kind: cmd.pty ? "execPty" : "exec" });
  log.autoApproved(turn, { approvalId, command: cmd.exec, reason: "headless" });
  const logs = log.openRuntimeLogs(cmd.nonce ?? `t${turn}`);
  log.commandStarted(turn, { nonce: logs.nonce, exec: cmd.exec, pty: cmd.pty === true });
  const started = Date.now();
  const script = cmd.pty ? `{ ${cmd.exec}\n} 2>&1` : cmd.exec;
  let exitCode = -1;
  const out = { bytes: 0, chunks: [] as Uint8Array[], kept: 0 };
  const err = { bytes: 0, chunks: [] as Uint8Array[], kept: 0 };
  try {
    let child: ReturnType<typeof spawnGroup>;
    try {
      child = spawnGroup(script, o.cwd, log.subprocessEnv());
    } catch (spawnErr) {
      // A missing project directory or shell fails this command, not the session.
      const msg = `intendant: cannot start command: ${(spawnErr as Error).message}\n`;
      const bytes = new TextEncoder().encode(msg);
      writeAllSync(logs.stderr, bytes);
      err.bytes += bytes.length;
      err.chunks.push(bytes);
      log.error(
        `Command "${cmd.exec.slice(0, 200)}" could not start: ${(spawnErr as Error).message}`,
        undefined,
        turn,
      );
      exitCode = 127;
      throw new SpawnFailed();
    }
    const kill = () => killGroup(child);
    o.signal.addEventListener("abort", kill, { once: true });
    const timer = setTimeout(kill, cmd.timeout_ms ?? DEFAULT_COMMAND_TIMEOUT_MS);
    const pumps = Promise.all([
      pump(child.stdout, logs.stdout, out),
      pump(child.stderr, logs.stderr, err),
    ]);
    const status = await child.status;
    clearTimeout(timer);
    o.signal.removeEventListener("abort", kill);
    // A descendant that escaped the group may still hold the pipes open: bounded wait.
    await Promise.race([pumps, new Promise((r) => setTimeout(r, 2000))]);
    exitCode = status.code;
  } catch (e) {
    if (!(e instanceof SpawnFailed)) throw e;
  } finally {
    logs.stdout.close();
    logs.stderr.close();
  }
  const stdout = decode(out.chunks);
  const stderr = decode(err.chunks);
  let toolText = stdout + stderr;
  let ptyLog: string | null = null;
  if (cmd.pty) {
    ptyLog = log.writePtyLog(logs, stdout);
    if (ptyLog) toolText = cutUtf8(stdout, PTY_FULL_LOG_THRESHOLD_BYTES);
  }
  log.commandFinished(turn, {
    nonce: logs.nonce,
    exitCode,
    stdoutLog: logs.stdoutName,
    stderrLog: logs.stderrName,
    ptyLog,
    stdoutBytes: out.bytes,
    stderrBytes: err.bytes,
    durationMs: Date.now() - started,
  });
  return { nonce: logs.nonce, exitCode, stdout, stderr, toolText, ptyLog };
}

/** Internal signal: the command could not be spawned (already logged). */
class SpawnFailed extends Error {}

/**
 * Spawns `sh -c script` as the leader of a new process group (via setsid where it exists)
 * so an interrupt or timeout can stop the whole pipeline, not just the shell.
 */
function spawnGroup(
  script: string,
  cwd: string,
  env: Record<string, string>,
): Deno.ChildProcess & { grouped: boolean } {
  const opts = { cwd, env, stdin: "null", stdout: "piped", stderr: "piped" } as const;
  try {
    const child = new Deno.Command("setsid", { ...opts, args: ["sh", "-c", script] }).spawn();
    return Object.assign(child, { grouped: true });
  } catch (err) {
    if (!(err instanceof Deno.errors.NotFound)) throw err;
    return Object.assign(new Deno.Command("sh", { ...opts, args: ["-c", script] }).spawn(), {
      grouped: false,
    });
  }
}

function killGroup(child: Deno.ChildProcess & { grouped: boolean }): void {
  try {
    if (child.grouped) Deno.kill(-child.pid, "SIGTERM");
    else child.kill("SIGTERM");
  } catch (err) {
    // ESRCH: the group already exited; nothing left to stop.
    if (!(err instanceof Deno.errors.NotFound) && !(err instanceof TypeError)) throw err;
  }
}

async function pump(
  stream: ReadableStream<Uint8Array>,
  file: Deno.FsFile,
  acc: { bytes: number; chunks: Uint8Array[]; kept: number },
): Promise<void> {
  for await (const chunk of stream) {
    writeAllSync(file, chunk);
    acc.bytes += chunk.length;
    if (acc.kept < CAPTURE_CAP_BYTES) {
      const part = chunk.subarray(0, CAPTURE_CAP_BYTES - acc.kept);
      acc.chunks.push(part);
      acc.kept += part.length;
    }
  }
}

function decode(chunks: Uint8Array[]): string {
  const total = chunks.reduce((n, c) => n + c.length, 0);
  const buf = new Uint8Array(total);
  let off = 0;
  for (const c of chunks) {
    buf.set(c, off);
    off += c.length;
  }
  return new TextDecoder().decode(buf);
}

/** Cuts a string to at most `maxBytes` of UTF-8 on a character boundary. */
export function cutUtf8(text: string, maxBytes: number): string {
  const bytes = new TextEncoder().encode(text);
  if (bytes.length <= maxBytes) return text;
  let end = maxBytes;
  // Back up over continuation bytes (10xxxxxx) so no character is split.
  while (end > 0 && (bytes[end]! & 0xc0) === 0x80) end--;
  return new TextDecoder().decode(bytes.subarray(0, end));
}
