/**
 * Child process for the concurrent-writers test (reliability-plan B13): one native session
 * written through the real SessionLog as fast as it can (or at most <rate> messages per
 * second when rate > 0) for <seconds>. Every message is a follow-up user message with
 * seq 1..N and text "<tag> m<seq>"; its event's ts_ms is the write time the parent's lag
 * figure starts from. Prints "session <id>" once the session exists, "wrote <N>" at the end.
 * Usage: rel_writer_child.ts <logsDir> <seconds> <tag> [rate]
 */
import { SessionLog } from "../../lib/session_log/mod.ts";

const [logsDir, seconds, tag, rateArg] = Deno.args;
if (!logsDir || !seconds || !tag) {
  throw new Error("usage: rel_writer_child.ts <logsDir> <seconds> <tag> [rate]");
}
const enc = new TextEncoder();
const say = (line: string) => Deno.stdout.writeSync(enc.encode(line + "\n"));
const log = await SessionLog.create({
  logsDir,
  tmpDir: logsDir,
  meta: { projectRoot: "/home/dev/app", task: `writer ${tag}` },
});
log.sessionStarted({
  task: `writer ${tag}`,
  projectRoot: "/home/dev/app",
  round: 1,
  provider: "mock",
  autonomy: "headless",
  resumed: false,
});
say(`session ${log.sessionId}`);
const rate = Number(rateArg ?? 0);
const started = Date.now();
const deadline = started + Number(seconds) * 1000;
let n = 0;
while (Date.now() < deadline) {
  n++;
  log.conversationMessageUser(undefined, { seq: n, provenance: "follow_up", text: `${tag} m${n}` });
  if (rate > 0) {
    const ahead = started + (n * 1000) / rate - Date.now();
    if (ahead > 1) await new Promise((r) => setTimeout(r, ahead));
  } else if (n % 256 === 0) {
    // Let the event loop breathe (nothing else runs here; keeps the child killable).
    await Promise.resolve();
  }
}
await log.close();
say(`wrote ${n}`);
