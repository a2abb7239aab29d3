/**
 * The process crash hook. An uncaught error or unhandled rejection is recorded in the
 * CURRENT session log (after a fallback that is the fallback directory: the log object
 * is what gets registered, not a path), the session is finished as failed so its meta and
 * summaries stay valid, and then the injected exit runs. One hook per process.
 */
import type { SessionLog } from "./session_log.ts";

let current: SessionLog | null = null;
let installed = false;

/** Makes `log` the session a crash is recorded in (null to clear). */
export function registerCrashLog(log: SessionLog | null): void {
  current = log;
}

/** The currently registered log (for tests and diagnostics). */
export function crashLog(): SessionLog | null {
  return current;
}

/** Options for {@link installCrashHook}. */
export interface CrashHookOptions {
  /** Called after the log is finished. Production passes `(code) => Deno.exit(code)`. */
  exit: (code: number) => void;
  /** Where to print the error (stderr). */
  report: (line: string) => void;
  /** @default 70 (EX_SOFTWARE) */
  exitCode?: number;
}

/** Installs the global listeners once; later calls only update nothing. */
export function installCrashHook(options: CrashHookOptions): void {
  if (installed) return;
  installed = true;
  const handle = async (err: unknown) => {
    options.report(
      `intendant: fatal: ${err instanceof Error ? err.stack ?? err.message : String(err)}`,
    );
    const log = current;
    if (log && !log.closed) {
      try {
        log.crash(err);
        await log.finish("failed", { reason: "crash" });
      } catch (inner) {
        options.report(`intendant: could not record the crash: ${String(inner)}`);
      }
    }
    options.exit(options.exitCode ?? 70);
  };
  globalThis.addEventListener("error", (e) => {
    e.preventDefault();
    void handle(e.error);
  });
  globalThis.addEventListener("unhandledrejection", (e) => {
    e.preventDefault();
    void handle(e.reason);
  });
}
