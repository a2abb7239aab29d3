/**
 * Test helpers: temp directories that are always removed, and a fake CLI edge whose
 * HOME and every agent home point into the temp dir (no test reads the real home).
 */
import { join } from "node:path";
import type { CliIo } from "../../lib/cli/mod.ts";

/** Runs `fn` with a fresh temp dir, removed afterwards. */
export async function withTempDir<T>(fn: (dir: string) => Promise<T> | T): Promise<T> {
  const dir = await Deno.makeTempDir({ prefix: "intendant-test-" });
  try {
    return await fn(dir);
  } finally {
    await Deno.remove(dir, { recursive: true }).catch(() => {});
  }
}

/** A hermetic environment rooted at `root`. */
export function hermeticEnv(
  root: string,
  extra: Record<string, string> = {},
): Record<string, string> {
  return {
    HOME: join(root, "home"),
    INTENDANT_HOME: join(root, "state"),
    CODEX_HOME: join(root, "home", ".codex"),
    CLAUDE_CONFIG_DIR: join(root, "home", ".claude"),
    KIMI_CODE_HOME: join(root, "home", ".kimi-code"),
    PI_CODING_AGENT_DIR: join(root, "home", ".pi", "agent"),
    TMPDIR: join(root, "tmp"),
    INTENDANT_MESSAGE_SEARCH_DAEMON_HOME_ONLY: "1",
    ...extra,
  };
}

/** A CliIo that records output. */
export function fakeIo(
  env: Record<string, string>,
  cwd: string,
): CliIo & { out: string[]; err: string[] } {
  const out: string[] = [];
  const err: string[] = [];
  return {
    env,
    cwd,
    os: "linux",
    isTty: false,
    stdout: (s) => out.push(s),
    stderr: (s) => err.push(s),
    out,
    err,
  };
}

/** Path of the deno binary running the tests (for spawning children). */
export const DENO = Deno.execPath();

/** Repo root (this file is tests/helpers/temp.ts). */
export const REPO_ROOT = new URL("../../", import.meta.url).pathname.replace(/\/$/, "");

/**
 * The absolute path of a system tool that may live outside a minimal PATH (runuser is in
 * /usr/sbin, which `env -i PATH=/usr/bin:/bin` — a fresh machine's CI — leaves out), or the
 * bare name when none of the usual places has it.
 */
export function systemTool(name: string): string {
  const dirs = [...(Deno.env.get("PATH") ?? "").split(":"), "/usr/sbin", "/sbin", "/usr/bin"];
  for (const d of dirs) {
    if (!d) continue;
    try {
      if (Deno.statSync(`${d}/${name}`).isFile) return `${d}/${name}`;
    } catch { /* not here */ }
  }
  return name;
}
