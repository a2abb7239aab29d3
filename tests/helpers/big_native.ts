/**
 * A big native session written fast, for the resource-bound tests (reliability-plan F4):
 * the lines the runner writes for a long run (every one built and validated by the real
 * `buildEvent`), turn after turn — a user follow-up every third turn, the model's reply
 * in a turns/ sidecar (50 turns per sidecar, as spans) with its canonical twin, two
 * commands per turn (agent_input, auto_approved, command_started/finished with runtime
 * logs, agent_output), turn_end — until the spine reaches `bytes`. Written in large
 * appends, never held whole.
 */
import { dirname, join } from "node:path";
import { buildEvent, type EventName } from "../../lib/session_log/mod.ts";
import { rolloutRel, RolloutWriter, uuidv7 } from "../fixtures/codex_fixture.ts";

/** What was written. */
export interface BigNative {
  id: string;
  dir: string;
  /** session.jsonl size. */
  bytes: number;
  lines: number;
  turns: number;
}

const enc = new TextEncoder();
const LOG_NONCE = "0123456789abcdef0123456789abcdef";

/** Writes the session `id` under `logsDir` until its spine holds about `bytes` bytes. */
export async function writeBigNative(
  logsDir: string,
  o: { id: string; bytes: number; needle?: string; startMs?: number },
): Promise<BigNative> {
  const dir = join(logsDir, o.id);
  await Deno.mkdir(join(dir, "turns"), { recursive: true, mode: 0o700 });
  const start = o.startMs ?? Date.now() - 86_400_000;
  const task = "Refactor the payment service and keep every test green";
  await Deno.writeTextFile(
    join(dir, "session_meta.json"),
    JSON.stringify({
      session_id: o.id,
      created_at: new Date(start).toISOString(),
      created_at_ms: start,
      project_root: "/home/dev/payments",
      name: null,
      task,
      status: "completed",
      last_turn: 0,
      role: null,
      rounds: 1,
    }),
  );
  for (const stream of ["stdout", "stderr"]) {
    await Deno.writeTextFile(join(dir, `c1_${LOG_NONCE}_${stream}.log`), "ok\n".repeat(200));
  }
  const spine = await Deno.open(join(dir, "session.jsonl"), { create: true, write: true });
  let ms = start, lines = 0, size = 0, seq = 0, turn = 0;
  let out: string[] = [];
  const emit = <K extends EventName>(
    name: K,
    data: unknown,
    fields: { turn?: number; message?: string; file?: string; file2?: string } = {},
  ) => {
    ms += 37;
    const { event } = buildEvent(name, data as never, fields, ms);
    const text = JSON.stringify(event) + "\n";
    out.push(text);
    size += text.length;
    lines++;
  };
  const flush = async () => {
    await spine.write(enc.encode(out.join("")));
    out = [];
  };
  emit("session_started", {
    task,
    project_root: "/home/dev/payments",
    round: 1,
    provider: "mock",
    model: "mock-1",
    autonomy: "headless",
    resumed: false,
  });
  emit("conversation_message", {
    message_seq: ++seq,
    role: "user",
    provenance: "task",
    text: task,
  });
  let sidecar = "";
  let model: string[] = [];
  let modelBytes = 0;
  try {
    while (size < o.bytes) {
      turn++;
      if (turn % 50 === 1) {
        if (model.length) await Deno.writeTextFile(join(dir, sidecar), model.join(""));
        sidecar = `turns/turn_${String(turn).padStart(3, "0")}_model.txt`;
        model = [];
        modelBytes = 0;
      }
      emit("turn_start", { provider: "mock" }, { turn });
      if (turn % 3 === 0) {
        const text = `Please also check module ${turn}: ${
          "the ledger totals must match. ".repeat(24)
        }`;
        emit("conversation_message", {
          message_seq: ++seq,
          role: "user",
          provenance: "follow_up",
          text,
        }, { turn });
      }
      const needle = o.needle && turn % 997 === 0 ? ` ${o.needle}` : "";
      const reply =
        `Turn ${turn}: I read the service, ran the suite and fixed the rounding.${needle} ` +
        "Next I will look at the refund path and the currency table. ".repeat(6);
      const bytes = enc.encode(reply).length;
      model.push(reply);
      emit(
        "model_response",
        { model_offset: modelBytes, model_bytes: bytes, has_tool_calls: true },
        { turn, file: sidecar },
      );
      emit("conversation_message", {
        message_seq: ++seq,
        role: "assistant",
        provenance: "assistant",
        model_offset: modelBytes,
        model_bytes: bytes,
      }, { turn, file: sidecar });
      modelBytes += bytes;
      const cmds = [
        `deno test --filter ledger_${turn} src/payments/`,
        `grep -rn "round(" src/ | head -${turn % 40}`,
      ];
      emit("agent_input", { commands: 2, nonces: ["c1", "c2"], functions: [] }, {
        turn,
        message: cmds.join("; "),
      });
      for (const [i, exec] of cmds.entries()) {
        const nonce = `c${i + 1}`;
        emit("auto_approved", { approval_id: `a${turn}.${i}`, command: exec, reason: "headless" }, {
          turn,
        });
        emit("command_started", { nonce, exec, pty: false }, { turn });
        emit("command_finished", {
          nonce,
          exit_code: 0,
          stdout_log: `c1_${LOG_NONCE}_stdout.log`,
          stderr_log: `c1_${LOG_NONCE}_stderr.log`,
          stdout_bytes: 600,
          stderr_bytes: 0,
          duration_ms: 120,
        }, { turn });
      }
      emit("turn_end", { commands: 2, duration_ms: 900 }, { turn });
      if (out.length > 4000) await flush();
    }
    emit("session_end", { status: "completed", turns: turn, duration_ms: ms - start });
    await flush();
    if (model.length) await Deno.writeTextFile(join(dir, sidecar), model.join(""));
  } finally {
    spine.close();
  }
  return { id: o.id, dir, bytes: size, lines, turns: turn };
}

/** `n` small native sessions (a meta and a few spine lines each), for the catalog. */
export async function writeSmallNatives(
  logsDir: string,
  n: number,
  now = Date.now(),
): Promise<void> {
  for (let i = 0; i < n; i++) {
    const id = `019b2222-0000-7000-8000-${String(i).padStart(12, "0")}`;
    const dir = join(logsDir, id);
    await Deno.mkdir(dir, { recursive: true, mode: 0o700 });
    const created = now - (i + 1) * 60_000;
    const task = `Small task ${i}: tidy the module ${i}`;
    await Deno.writeTextFile(
      join(dir, "session_meta.json"),
      JSON.stringify({
        session_id: id,
        created_at: new Date(created).toISOString(),
        created_at_ms: created,
        project_root: `/home/dev/p${i % 7}`,
        name: null,
        task,
        status: "completed",
        last_turn: 1,
        role: null,
        rounds: 1,
      }),
    );
    const lines = [
      buildEvent(
        "session_started",
        {
          task,
          project_root: `/home/dev/p${i % 7}`,
          round: 1,
          provider: "mock",
          autonomy: "headless",
          resumed: false,
        },
        {},
        created + 1,
      ).event,
      buildEvent(
        "conversation_message",
        {
          message_seq: 1,
          role: "user",
          provenance: "task",
          text: task,
        },
        {},
        created + 2,
      ).event,
      buildEvent("session_end", { status: "completed", turns: 1, duration_ms: 5 }, {}, created + 3)
        .event,
    ];
    await Deno.writeTextFile(
      join(dir, "session.jsonl"),
      lines.map((l) => JSON.stringify(l) + "\n").join(""),
    );
  }
}

/** A long Codex rollout (prose, reasoning, tool calls with output) of about `bytes` bytes. */
export async function writeBigCodex(
  codexHome: string,
  o: { bytes: number; now?: number },
): Promise<{ key: string; path: string }> {
  const start = (o.now ?? Date.now()) - 6 * 3_600_000;
  const w = new RolloutWriter(uuidv7(start, "f4-big-rollout"), start, true);
  w.meta({ cwd: "/home/dev/big", cli_version: "0.137.0", originator: "codex_cli_rs" })
    .turnContext("/home/dev/big");
  let size = 0;
  for (let i = 0; size < o.bytes; i++) {
    const before = w.lines.length;
    w.user(`Step ${i}: check the importer against fixture ${i} and report the diff`);
    w.work(`deno test --filter importer_${i}`);
    w.assistant([`Step ${i} done: ${"the importer keeps row order and totals. ".repeat(8)}`]);
    for (let k = before; k < w.lines.length; k++) size += w.lines[k]!.length + 1;
  }
  const path = join(codexHome, rolloutRel(start, w.id));
  await Deno.mkdir(dirname(path), { recursive: true });
  await Deno.writeFile(path, w.bytes());
  return { key: `codex:${w.id}`, path };
}
