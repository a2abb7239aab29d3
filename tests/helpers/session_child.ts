/**
 * Child process for session-log tests that need real concurrency, real kill -9 and a
 * real uncaught crash. Usage: session_child.ts <mode> <dir> [n] [tag]
 *   append  <dir> <n> <tag>  reopen the session and append n info events
 *   meta    <dir>            rewrite session_meta.json forever (killed by the parent)
 *   crash   <logsDir>        open a session, install the crash hook, throw uncaught
 */
import { installCrashHook, registerCrashLog, SessionLog } from "../../lib/session_log/mod.ts";

const [mode, dir, nArg, tag] = Deno.args;
if (!mode || !dir) throw new Error("usage: session_child.ts <mode> <dir> [n] [tag]");

if (mode === "append") {
  const log = await SessionLog.reopen(dir, { logsDir: dir, tmpDir: dir });
  const n = Number(nArg);
  // Varying sizes so some lines cross page boundaries.
  for (let i = 0; i < n; i++) log.info(`${tag} ${i}`, { tag, i, pad: "x".repeat(i % 700) });
  await log.close();
} else if (mode === "meta") {
  const log = await SessionLog.reopen(dir, { logsDir: dir, tmpDir: dir });
  Deno.stdout.writeSync(new TextEncoder().encode("ready\n"));
  for (let i = 0;; i++) {
    await log.updateMeta({ last_turn: i, name: `name ${i} ${"y".repeat(i % 3000)}` });
  }
} else if (mode === "crash") {
  const log = await SessionLog.create({
    logsDir: dir,
    tmpDir: dir,
    meta: { projectRoot: "/p", task: "crash me" },
  });
  registerCrashLog(log);
  installCrashHook({ exit: (c) => Deno.exit(c), report: (l) => console.error(l) });
  Deno.stdout.writeSync(new TextEncoder().encode(log.dir + "\n"));
  setTimeout(() => {
    throw new Error("boom from the child");
  }, 10);
}
