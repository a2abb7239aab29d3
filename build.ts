/**
 * Build script. `deno run -A build.ts bundle` produces dist/intendant.js, one file that
 * `deno run` executes from an empty directory (deno bundle --platform=deno works offline).
 * Each step prints one line; a failing step exits non-zero with its reason.
 */
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = dirname(fileURLToPath(import.meta.url));

/** Bundles main.ts into dist/intendant.js. */
async function bundle(): Promise<void> {
  await Deno.mkdir(join(ROOT, "dist"), { recursive: true });
  const out = join(ROOT, "dist", "intendant.js");
  const r = await new Deno.Command(Deno.execPath(), {
    args: ["bundle", "--platform=deno", "-o", out, join(ROOT, "main.ts")],
    cwd: ROOT,
    stdout: "piped",
    stderr: "piped",
  }).output();
  if (!r.success) {
    throw new Error(
      `deno bundle failed: ${new TextDecoder().decode(r.stderr).trim().split("\n").at(-1)}`,
    );
  }
  const size = (await Deno.stat(out)).size;
  console.log(`bundle: ${out} (${(size / 1024).toFixed(0)} KiB)`);
}

if (import.meta.main) {
  const step = Deno.args[0] ?? "bundle";
  try {
    if (step === "bundle") await bundle();
    else throw new Error(`Unknown build step "${step}": expected "bundle"`);
  } catch (err) {
    console.error(`build: ${err instanceof Error ? err.message : String(err)}`);
    Deno.exit(1);
  }
}
