/**
 * Builds a pre-lane ("legacy era") native session directory the way writers before the
 * message lane left them: events without ts_ms, session_started tasks, model_response
 * events naming whole turns/ files (or spans), steer_requested/steer_delivered pairs,
 * "Round N follow-up:" info lines, and a conversation.jsonl whose messages have no seq.
 */
import { join } from "node:path";
import { formatLocalDateTime, formatTimeOfDay } from "../../lib/session_log/mod.ts";

export interface LegacyFixture {
  dir: string;
  id: string;
  createdAtMs: number;
  texts: { task: string; reply1: string; steer: string; reply2: string; followUp: string };
}

/** Writes the fixture under `logsDir`; the session starts 3 minutes before local midnight `daysAgo` days ago. */
export function writeLegacySession(
  logsDir: string,
  o: { id?: string; daysAgo?: number; project?: string } = {},
): LegacyFixture {
  const id = o.id ?? "0legacy0-aaaa-4bbb-8ccc-000000000001";
  const dir = join(logsDir, id);
  Deno.mkdirSync(join(dir, "turns"), { recursive: true, mode: 0o700 });
  const today = new Date();
  const midnight = new Date(
    today.getFullYear(),
    today.getMonth(),
    today.getDate() - (o.daysAgo ?? 1),
  ).getTime();
  const created = midnight - 3 * 60_000;
  const texts = {
    task: "Fix the login redirect loop",
    reply1: "I'll trace the redirect: the session cookie is set after the 302.",
    steer: "use the OAuth middleware instead",
    reply2: "Switched to the OAuth middleware; naïve cookie code removed — 完了.",
    followUp: "also add a regression test",
  };
  const enc = new TextEncoder();
  Deno.writeFileSync(join(dir, "turns", "turn_001_model.txt"), enc.encode(texts.reply1));
  Deno.writeFileSync(join(dir, "turns", "turn_002_model.txt"), enc.encode("PREFIX" + texts.reply2));
  const at = (deltaMs: number) => formatTimeOfDay(created + deltaMs);
  const reply2Bytes = enc.encode(texts.reply2).length;
  const lines = [
    { ts: at(1_000), event: "session_started", message: texts.task, data: { task: texts.task } },
    { ts: at(2_000), turn: 1, event: "turn_start" },
    { ts: at(5_000), turn: 1, event: "model_response", file: "turns/turn_001_model.txt" },
    { ts: at(60_000), event: "steer_requested", data: { steer_id: "st-1", text: texts.steer } },
    // After local midnight: only a time of day, smaller than the previous one.
    { ts: at(4 * 60_000), turn: 2, event: "steer_delivered", data: { steer_id: "st-1" } },
    {
      ts: at(5 * 60_000),
      turn: 2,
      event: "model_response",
      file: "turns/turn_002_model.txt",
      data: { model_offset: 6, model_bytes: reply2Bytes },
    },
    {
      ts: at(6 * 60_000),
      event: "info",
      level: "info",
      message: `Round 2 follow-up: ${texts.followUp}`,
    },
    { ts: at(6 * 60_000 + 10), event: "info", level: "info", message: "Some other diagnostic" },
    { ts: at(7 * 60_000), event: "agent_output", turn: 2, file: "turns/turn_002_stdout.txt" },
  ];
  const body = lines.map((l) => JSON.stringify(l)).join("\n") + "\n{not json at all\n";
  Deno.writeTextFileSync(join(dir, "session.jsonl"), body, { mode: 0o600 });
  const meta = {
    session_id: id,
    created_at: formatLocalDateTime(created),
    created_at_ms: created,
    project_root: o.project ?? "/home/dev/legacy",
    name: null,
    task: texts.task,
    status: "completed",
    last_turn: 2,
    role: null,
    rounds: 2,
  };
  Deno.writeTextFileSync(join(dir, "session_meta.json"), JSON.stringify(meta, null, 2));
  const conv = [
    { role: "user", content: texts.task },
    { role: "assistant", content: texts.reply1 },
    { role: "user", content: `[User] ${texts.steer}` },
    { role: "assistant", content: texts.reply2 },
    { role: "user", content: texts.followUp },
  ];
  Deno.writeTextFileSync(
    join(dir, "conversation.jsonl"),
    conv.map((m) => JSON.stringify(m)).join("\n") + "\n",
  );
  return { dir, id, createdAtMs: created, texts };
}
