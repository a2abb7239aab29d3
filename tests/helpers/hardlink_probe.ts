/**
 * Run by tests/reliability_hardlink_test.ts under the daemon's EXACT locked profile (the
 * flags `serve --locked` re-executes with): for each planted hard link it records
 *  - direct: reading the outside target by its own name (the profile must say NotCapable);
 *  - naive: the old reader (lstat, open, fstat dev+ino, no link count) on the name inside
 *    the state root — the profile allows it (permissions are checked at the name), so it
 *    reads the secret: the negative control;
 *  - contained: the one contained reader on the same name (must refuse "hardlinked").
 * Usage: hardlink_probe.ts <json [{path, target, secret}]>; prints one JSON line.
 */
import { openContained } from "../../lib/durable/mod.ts";
import { naiveContainedRead } from "./hardlink_plant.ts";

interface Plan {
  path: string;
  target: string;
  secret: string;
}

async function outcome(f: () => Promise<string>): Promise<string> {
  try {
    return await f();
  } catch (err) {
    if (err instanceof Deno.errors.NotCapable) return "NotCapable";
    return `${(err as Error).name}`;
  }
}

const plans: Plan[] = JSON.parse(Deno.args[0]!);
const out = [];
for (const p of plans) {
  const has = (b: Uint8Array | null) =>
    b !== null && new TextDecoder().decode(b).includes(p.secret) ? "READ SECRET" : "no secret";
  out.push({
    direct: await outcome(async () => has(await Deno.readFile(p.target))),
    naive: await outcome(async () => has(await naiveContainedRead(p.path))),
    contained: await outcome(async () => {
      const r = await openContained(p.path);
      if (!r.ok) return `refused: ${r.reason}`;
      try {
        return has(await r.file.read(0, r.file.size));
      } finally {
        await r.file.close();
      }
    }),
  });
}
// deno-lint-ignore no-console
console.log(JSON.stringify(out));
