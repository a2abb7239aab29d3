/**
 * The daemon.log controller tee. Deno cannot dup2 over its own fds, so the tee captures
 * the controller's console (log/info/debug → stdout, warn/error → stderr), writes each
 * complete line to `<session>/daemon.log` prefixed with a wallclock timestamp, and mirrors
 * the raw text to the terminal. Best-effort by design (as the spec says): a newline-free
 * tail stays buffered until drain(), which flushes it within a bounded window. A no-op on
 * Windows. Process-scoped: install once, for the bootstrap session.
 */
import { openRegularFileSync, writeAllSync } from "../durable/mod.ts";
import { DAEMON_LOG } from "./paths.ts";

/** Options for {@link installDaemonLogTee}. */
export interface TeeOptions {
  /** The session directory that gets daemon.log. */
  dir: string;
  /** `Deno.build.os`; the tee is a no-op on "windows". */
  os: string;
  /** Terminal mirrors (raw text, no timestamps). */
  terminal: { stdout: (text: string) => void; stderr: (text: string) => void };
  /** The console object to capture. @default globalThis.console */
  target?: Console;
  now?: () => number;
}

/** A handle on an installed tee. */
export interface Tee {
  readonly active: boolean;
  /** Flushes buffered tails (within `windowMs`), restores the console, closes the file. */
  drain(windowMs?: number): Promise<void>;
  bytesWritten(): number;
}

const METHODS = {
  log: "stdout",
  info: "stdout",
  debug: "stdout",
  warn: "stderr",
  error: "stderr",
} as const;

/** Installs the tee; returns an inactive handle off Unix or when daemon.log cannot be opened. */
export function installDaemonLogTee(options: TeeOptions): Tee {
  const inactive: Tee = { active: false, drain: () => Promise.resolve(), bytesWritten: () => 0 };
  if (options.os === "windows") return inactive;
  const target = options.target ?? globalThis.console;
  const now = options.now ?? Date.now;
  let file: Deno.FsFile | null;
  try {
    file = openRegularFileSync(options.dir, DAEMON_LOG, { root: options.dir, append: true });
  } catch (err) {
    options.terminal.stderr(`intendant: daemon.log tee disabled: ${(err as Error).message}\n`);
    return inactive;
  }
  const enc = new TextEncoder();
  let written = 0;
  const tails = { stdout: "", stderr: "" };
  const writeLine = (line: string) => {
    if (!file) return;
    const bytes = enc.encode(`${new Date(now()).toISOString()} ${line}\n`);
    try {
      writeAllSync(file, bytes);
      written += bytes.length;
    } catch (err) {
      // Best-effort sink: a failed file write must never break the program's output.
      if (!(err instanceof Error)) throw err;
    }
  };
  const feed = (stream: "stdout" | "stderr", text: string) => {
    options.terminal[stream](text);
    const parts = (tails[stream] + text).split("\n");
    tails[stream] = parts.pop() ?? "";
    for (const line of parts) writeLine(line);
  };
  const originals = new Map<string, (...args: unknown[]) => void>();
  for (const [method, stream] of Object.entries(METHODS)) {
    const t = target as unknown as Record<string, (...args: unknown[]) => void>;
    originals.set(method, t[method]!);
    t[method] = (...args: unknown[]) => feed(stream, formatArgs(args) + "\n");
  }
  return {
    active: true,
    bytesWritten: () => written,
    async drain(windowMs = 500) {
      const deadline = now() + windowMs;
      for (const stream of ["stdout", "stderr"] as const) {
        if (now() > deadline) break;
        if (tails[stream].length > 0) {
          writeLine(tails[stream]);
          tails[stream] = "";
        }
      }
      const t = target as unknown as Record<string, (...args: unknown[]) => void>;
      for (const [method, fn] of originals) t[method] = fn;
      await Promise.resolve();
      file?.close();
      file = null;
    },
  };
}

function formatArgs(args: unknown[]): string {
  return args.map((a) => typeof a === "string" ? a : Deno.inspect(a, { depth: 4, colors: false }))
    .join(" ");
}
