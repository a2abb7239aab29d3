/**
 * What a CLI command may touch of the outside world, handed in by main.ts. Commands
 * never read the process environment, argv or cwd themselves, so tests run them in-process with a
 * fake environment.
 */

/** The edge's view of the process. */
export interface CliIo {
  env: Readonly<Record<string, string | undefined>>;
  cwd: string;
  /** Deno.build.os */
  os: string;
  stdout: (text: string) => void;
  stderr: (text: string) => void;
  /** Whether stderr is a terminal (progress lines only then). */
  isTty: boolean;
  /** Whether stdin is a terminal: interactive questions (a delete's confirmation) only then. @default false */
  stdinIsTty?: boolean;
  /** Reads one line of stdin without its line end; null at end of input. @default no input */
  readLine?: () => Promise<string | null>;
  /** Process exit for the crash hook. @default no-op in tests */
  exit?: (code: number) => void;
  /**
   * How this program was started (Deno.execPath(), Deno.mainModule): `intendant mcp
   * --print-config` prints a command that starts this same program. @default unknown
   */
  launcher?: { denoPath: string; mainModule: string };
}

/** One subcommand. */
export interface Command {
  name: string;
  /** One line for `intendant --help`. */
  summary: string;
  /** Full usage text for `intendant <cmd> --help`. */
  usage: string;
  run(argv: string[], io: CliIo): Promise<number>;
}
