/**
 * Child process for the vault crash test (A17): one vault write through a FaultFs that
 * SIGKILLs this process before fs operation k. Usage:
 *   vault_child.ts <vault dir> <job json> <k>
 * job: {"op": "keep", "unit": KeepUnit} or {"op": "prune", "maxBytes": N}.
 * k = 0 counts only: it prints "ops <n>" after the write. Every completed write prints
 * "done"; a kill prints nothing more.
 */
import { FaultFs } from "./fault_fs.ts";
import { type KeepUnit, Vault } from "../../lib/vault/mod.ts";

const [dir, jobText, kText] = Deno.args;
if (!dir || !jobText || kText === undefined) {
  throw new Error("usage: vault_child.ts <vault dir> <job json> <k>");
}
const job = JSON.parse(jobText) as { op: "keep"; unit: KeepUnit } | {
  op: "prune";
  maxBytes: number;
};
const k = Number(kText);
const fs = new FaultFs();
fs.arm(k > 0 ? { at: k, action: "kill" } : null);
const vault = new Vault({ dir, fs });
if (job.op === "keep") {
  const r = await vault.keep([job.unit]);
  if (r.errors.length) throw new Error(r.errors.join("; "));
} else {
  await vault.prune(job.maxBytes);
}
const out = k === 0 ? `ops ${fs.ops.length}\ndone\n` : "done\n";
Deno.stdout.writeSync(new TextEncoder().encode(out));
