/**
 * Child process for reliability-plan H9: takes one step of a native session's delete or
 * restore through the real store and trash code, then SIGKILLs itself — the state a kill
 * at that point leaves. Usage (env: the hermetic environment of the test's world):
 *   rel_delete_child.ts after-tombstone <session-id>   tombstone, then die before the rename
 *   rel_delete_child.ts after-lift <session-id>        (a trashed session) lift, then die
 *                                                      before the rename back
 */
import { join } from "node:path";
import { resolveConfig } from "../../lib/config.ts";
import { createMessageIndex, sessionKey } from "../../lib/message_search/mod.ts";

const [step, id] = Deno.args;
if (!step || !id) throw new Error("usage: rel_delete_child.ts <step> <session-id>");
const env: Record<string, string | undefined> = {};
for (const k of ["HOME", "INTENDANT_HOME", "TMPDIR"]) env[k] = Deno.env.get(k);
const cfg = resolveConfig(env, { cwd: Deno.cwd() });
const { store } = await createMessageIndex(cfg);
const key = sessionKey("intendant", id);
if (step === "after-tombstone") {
  // deleteNativeSession's first step; the rename of logs/<id> never happens.
  await store.deleteSession(key);
} else if (step === "after-lift") {
  // restoreNativeSession's first step; the rename back from the trash never happens.
  await store.liftTombstone(key);
} else throw new Error(`Unknown step "${step}"`);
Deno.stdout.writeSync(new TextEncoder().encode(`${join(cfg.logsDir, id)}\n`));
Deno.kill(Deno.pid, "SIGKILL");
