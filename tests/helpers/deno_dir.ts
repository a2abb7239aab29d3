/**
 * The Deno cache directory of this test run (`deno info --json`), for children whose HOME
 * is hermetic: without it their DENO_DIR would be `<temp home>/.cache/deno`, empty, and
 * every child under runtime/deno.json ("nodeModulesDir": "auto") would ask the npm
 * registry for its packages' metadata again (and fetch the packages themselves into a
 * node_modules it has to fill). Sharing the cache shares downloads only, never state.
 */
import { DENO } from "./temp.ts";

let cached: Promise<string> | null = null;

/** The DENO_DIR the test process uses (resolved once per process). */
export function denoDir(): Promise<string> {
  return cached ??= (async () => {
    const out = await new Deno.Command(DENO, { args: ["info", "--json"], stderr: "null" })
      .output();
    return JSON.parse(new TextDecoder().decode(out.stdout)).denoDir as string;
  })();
}
