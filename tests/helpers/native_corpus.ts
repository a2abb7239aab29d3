/**
 * Writes realistic native sessions quickly, in process, through the real SessionLog
 * writer (the same typed methods the runner uses), for indexer and query tests.
 */
import { SessionLog } from "../../lib/session_log/mod.ts";
import { Conversation } from "../../lib/conversation/mod.ts";

/** Writes one session with `turns` user/assistant exchanges; returns its id and dir. */
export async function writeNativeSession(
  logsDir: string,
  o: {
    turns: number;
    task?: string;
    project?: string;
    now?: () => number;
    word?: (i: number) => string;
  },
): Promise<{ id: string; dir: string; texts: string[] }> {
  const task = o.task ?? "Investigate the failing build";
  const log = await SessionLog.create({
    logsDir,
    tmpDir: logsDir,
    now: o.now,
    meta: { projectRoot: o.project ?? "/home/dev/app", task },
  });
  const texts = [task];
  const conv = new Conversation();
  log.sessionStarted({
    task,
    projectRoot: o.project ?? "/home/dev/app",
    round: 1,
    provider: "mock",
    autonomy: "headless",
    resumed: false,
  });
  const first = conv.append({ role: "user", content: task, provenance: "task" }, log.dir);
  log.conversationMessageUser(undefined, { seq: first.seq, provenance: "task", text: task });
  for (let t = 1; t <= o.turns; t++) {
    await log.turnStart(t, "mock");
    const reply = `Turn ${t}: checked ${o.word?.(t) ?? "the logs"} and found nothing unusual.`;
    const m = conv.append({ role: "assistant", content: reply, provenance: "assistant" }, log.dir);
    log.modelResponseWithMessage(t, reply, { seq: m.seq, hasToolCalls: false });
    texts.push(reply);
    if (t % 3 === 0) {
      const follow = `Please also look at module ${t} (${o.word?.(t + 1000) ?? "ünïcode ✓"})`;
      const f = conv.append({ role: "user", content: follow, provenance: "follow_up" }, log.dir);
      log.conversationMessageUser(t, { seq: f.seq, provenance: "follow_up", text: follow });
      texts.push(follow);
    }
    log.turnEnd(t, { commands: 0, durationMs: 1 });
  }
  await log.finish("completed");
  return { id: log.sessionId, dir: log.dir, texts };
}
