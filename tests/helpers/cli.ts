/**
 * Spawning the real program (`deno run -A main.ts …`) for e2e tests, in a hermetic
 * environment: HOME, INTENDANT_HOME and every agent home point into a temp dir.
 */
import { join } from "node:path";
import { DENO, hermeticEnv, REPO_ROOT } from "./temp.ts";

export const MAIN = join(REPO_ROOT, "main.ts");

/** Output of a finished run. */
export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

function command(
  root: string,
  args: string[],
  o: { cwd?: string; env?: Record<string, string>; signal?: AbortSignal } = {},
) {
  return new Deno.Command(DENO, {
    signal: o.signal,
    args: ["run", "-A", "--quiet", MAIN, ...args],
    cwd: o.cwd ?? root,
    clearEnv: true,
    env: {
      PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin",
      NO_COLOR: "1",
      ...hermeticEnv(root),
      ...o.env,
    },
    stdout: "piped",
    stderr: "piped",
  });
}

/**
 * Runs intendant to completion; with `timeoutMs`, a run still going then is killed
 * (SIGTERM) and reported `timedOut` — a hang is a result, not a stuck test.
 */
export async function runIntendant(
  root: string,
  args: string[],
  o: { cwd?: string; env?: Record<string, string>; timeoutMs?: number } = {},
): Promise<CliResult & { timedOut?: boolean }> {
  const signal = o.timeoutMs === undefined ? undefined : AbortSignal.timeout(o.timeoutMs);
  const out = await command(root, args, { ...o, signal }).output();
  const dec = new TextDecoder();
  return {
    code: out.code,
    stdout: dec.decode(out.stdout),
    stderr: dec.decode(out.stderr),
    ...(signal?.aborted ? { timedOut: true } : {}),
  };
}

/** A running intendant whose stdout is collected as it arrives. */
export interface Spawned {
  child: Deno.ChildProcess;
  /** Resolves with the session dir once "dir …" is printed. */
  dir: Promise<string>;
  /** stderr received so far (the whole of it is in `done`). */
  stderrSoFar(): string;
  done: Promise<CliResult>;
}

/** Spawns intendant and parses its "session"/"dir" lines as they appear. */
export function spawnIntendant(
  root: string,
  args: string[],
  o: { cwd?: string; env?: Record<string, string> } = {},
): Spawned {
  const child = command(root, args, o).spawn();
  let stdout = "";
  let resolveDir: (d: string) => void = () => {};
  const dir = new Promise<string>((r) => (resolveDir = r));
  const readOut = (async () => {
    const dec = new TextDecoder();
    for await (const chunk of child.stdout) {
      stdout += dec.decode(chunk, { stream: true });
      const m = /^dir (.+)$/m.exec(stdout);
      if (m) resolveDir(m[1]!);
    }
  })();
  let stderr = "";
  const readErr = (async () => {
    const dec = new TextDecoder();
    for await (const chunk of child.stderr) stderr += dec.decode(chunk, { stream: true });
  })();
  const done = (async () => {
    const [status] = await Promise.all([child.status, readErr, readOut]);
    return { code: status.code, stdout, stderr };
  })();
  return { child, dir, stderrSoFar: () => stderr, done };
}

/**
 * Waits for `<root>/state/daemon.json` (a spawned `serve`; `o.stateRoot` when the run's
 * INTENDANT_HOME is elsewhere) and returns what it says.
 */
export async function waitForDaemonJson(
  root: string,
  timeoutMs = 20_000,
  o: { stateRoot?: string } = {},
): Promise<{ pid: number; port: number; url: string; token: string }> {
  const path = join(o.stateRoot ?? join(root, "state"), "daemon.json");
  await waitFor(
    () => {
      try {
        return Deno.statSync(path).isFile;
      } catch {
        return false;
      }
    },
    timeoutMs,
    "daemon.json",
  );
  return JSON.parse(Deno.readTextFileSync(path));
}

/** Polls until `pred` holds (or throws after `timeoutMs`). */
export async function waitFor(
  pred: () => boolean | Promise<boolean>,
  timeoutMs = 20_000,
  what = "condition",
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await pred()) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`Timed out waiting for ${what}`);
}

/** Reads a session's events as plain objects. */
export function readEvents(dir: string): Record<string, unknown>[] {
  // Fixture garbage lines (legacy sessions carry one) are skipped.
  return Deno.readTextFileSync(join(dir, "session.jsonl")).trimEnd().split("\n").filter(Boolean)
    .flatMap((l) => {
      try {
        return [JSON.parse(l)];
      } catch {
        return [];
      }
    });
}

/** Parses "session X / dir Y" from a finished run's stdout. */
export function sessionOf(r: CliResult): { id: string; dir: string } {
  const id = /^session (\S+)$/m.exec(r.stdout)?.[1];
  const dir = /^dir (.+)$/m.exec(r.stdout)?.[1];
  if (!id || !dir) throw new Error(`No session in output: ${r.stdout}\n${r.stderr}`);
  return { id, dir };
}
