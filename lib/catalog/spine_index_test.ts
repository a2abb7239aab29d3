/**
 * The spine index against the whole-spine build it replaces: for fuzzed spines covering
 * every row rule (legacy and new era, epoch markers with mappings, cuts, twins, approvals
 * folded or denied, commands with shared nonces, batch fallbacks, steers, follow-ups,
 * inferred times, malformed and CRLF lines) the paged rows — built at once, or built on a
 * prefix and then extended line batch by line batch — hydrate to exactly what
 * buildNativeRows + correlateLegacy + applyCuts + hydrateNative made from the whole file.
 * Also: memory per row, the cache bounds, appends extend instead of rebuilding, and a
 * rewrite rebuilds.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { hash16Of, RECORD_TEXT_CAP_BYTES } from "../message_search/mod.ts";
import { parseEvents, type ReadEvent } from "../session_log/mod.ts";
import { hydrateNative, withNativeSpine } from "./native_detail.ts";
import { applyCuts, buildNativeRows, eraOf, type NativeRow } from "./native_rows.ts";
import { readSpanText } from "./native_text.ts";
import { SpineCache } from "./spine_cache.ts";
import { withTempDir } from "../../tests/helpers/temp.ts";

/** mulberry32: a small seeded PRNG (INTENDANT_SEED replays a run). */
function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** The old native_detail.ts correlateLegacy, verbatim: the oracle. */
async function correlateOld(dir: string, events: ReadEvent[], rows: NativeRow[]) {
  const { epochAt } = eraOf(events);
  if (epochAt < 0 || !rows.some((r) => r.kind === "cut")) return;
  const marker = events[epochAt]!;
  const mapping = [
    ...((marker.event.data as { mapping?: [number, string, string][] })?.mapping ?? []),
  ];
  for (const r of rows) {
    if (r.kind !== "message" || r.line >= marker.lineNo || r.seq !== undefined || !r.role) continue;
    let text = r.text;
    if (text === undefined && r.span) {
      const read = await readSpanText(dir, r.span, RECORD_TEXT_CAP_BYTES + 4);
      text = read.ok ? read.text : undefined;
    }
    if (text === undefined) continue;
    const h = hash16Of(text);
    const at = mapping.findIndex(([, role, mh]) => role === r.role && mh === h);
    if (at >= 0) r.seq = mapping.splice(at, 1)[0]![0];
  }
}

/** What the old whole-spine path answered for the whole detail. */
async function oldDetail(dir: string, meta: { created: number | null; task: string | null }) {
  const bytes = Deno.readFileSync(join(dir, "session.jsonl"));
  const { events } = parseEvents(bytes);
  const rows = buildNativeRows(events, { createdAtMs: meta.created, metaTask: meta.task });
  await correlateOld(dir, events, rows);
  applyCuts(rows);
  return JSON.parse(JSON.stringify(await hydrateNative(dir, rows, 0)));
}

async function newDetail(dir: string, id: string, cache: SpineCache) {
  return await withNativeSpine(dir, id, async (m) => {
    const rows = await m.rows(0, m.total);
    return JSON.parse(JSON.stringify(await hydrateNative(dir, rows, 0)));
  }, { cache });
}

const TEXTS = [
  "fix the parser",
  "use OAuth",
  "also add a test",
  "",
  "naïve ✓ 完了",
  "fix the parser",
];

/** One random spine (lines as JSON text, some malformed), and what the mapping needs. */
function fuzzSpine(r: () => number, n: number): string[] {
  const pickOf = <T>(xs: readonly T[]): T => xs[Math.floor(r() * xs.length)]!;
  const lines: string[] = [];
  let seq = 0;
  let turn = 1;
  const userTexts: string[] = [];
  const ids: string[] = [];
  const nonces = ["n1", "n2", "n3"];
  const cmds = ["ls", "rm -rf /", "make"];
  for (let i = 0; i < n; i++) {
    const ts = r() < 0.5
      ? { ts: `0${Math.floor(r() * 10)}:${10 + Math.floor(r() * 49)}:00.000` }
      : { ts: "2026-05-01T10:00:00.000Z", ts_ms: 1_777_000_000_000 + i * 1000 };
    const t = r() < 0.8 ? { turn } : {};
    const k = r();
    let ev: Record<string, unknown>;
    if (k < 0.08) {
      const text = pickOf(TEXTS);
      userTexts.push(text);
      ev = {
        event: "session_started",
        ...(r() < 0.5
          ? { data: { task: text, provider: "mock", model: "m" } }
          : r() < 0.5
          ? { message: text }
          : { data: { provider: "p2" } }),
      };
    } else if (k < 0.16) {
      const file = `turns/turn_00${turn}_model.txt`;
      const off = Math.floor(r() * 3) * 4;
      ev = r() < 0.9
        ? {
          event: "model_response",
          file,
          data: { model_offset: off, model_bytes: 4, has_tool_calls: r() < 0.5 },
        }
        : { event: "model_response" };
      if (r() < 0.8) {
        lines.push(JSON.stringify({ ...ts, ...t, ...ev }));
        ev = {
          event: "conversation_message",
          file,
          data: { role: "assistant", message_seq: ++seq, model_offset: off },
        };
      }
    } else if (k < 0.24) {
      const text = pickOf(TEXTS);
      ev = {
        event: "conversation_message",
        data: {
          role: "user",
          text,
          message_seq: r() < 0.9 ? ++seq : undefined,
          provenance: "follow_up",
        },
      };
    } else if (k < 0.27) {
      ev = {
        event: "conversation_message_epoch",
        data: { mapping: userTexts.map((x, j) => [100 + j, "user", hash16Of(x)]) },
      };
    } else if (k < 0.30) {
      ev = {
        event: "conversation_rewound",
        data: { cut_after_seq: Math.floor(r() * (seq + 1)), kind: "rollback" },
      };
    } else if (k < 0.42) {
      const id = r() < 0.5 && ids.length ? pickOf(ids) : `A${i}`;
      ids.push(id);
      const kind = pickOf(["approval", "auto_approved", "approval_resolved"]);
      ev = {
        event: kind,
        data: {
          approval_id: id,
          command: pickOf(cmds),
          decision: pickOf(["approved", "denied"]),
          by: "me",
          reason: "headless",
          kind: "exec",
        },
      };
    } else if (k < 0.56) {
      const e = pickOf([
        "agent_input",
        "command_started",
        "command_finished",
        "command_finished",
        "agent_output",
      ]);
      ev = {
        event: e,
        ...(e === "agent_input" ? { message: "a; b" } : {}),
        ...(e === "agent_output"
          ? { file: "turns/turn_001_stdout.txt", file2: "turns/turn_001_stderr.txt" }
          : {}),
        data: {
          nonce: r() < 0.9 ? pickOf(nonces) : undefined,
          exec: pickOf(cmds),
          pty: r() < 0.2,
          nonces: ["n1"],
          exit_code: pickOf([0, 1, undefined]),
          duration_ms: 5,
          stdout_log: "n1_0123456789abcdef0123456789abcdef_stdout.log",
          exit_codes: pickOf([[0], [0, 1], []]),
        },
      };
    } else if (k < 0.62) {
      ev = {
        event: "steer_requested",
        data: { steer_id: pickOf(["s1", "s2"]), text: pickOf(TEXTS) },
      };
    } else if (k < 0.68) {
      ev = { event: "steer_delivered", data: { steer_id: pickOf(["s1", "s2", "s3"]) } };
    } else if (k < 0.73) {
      const text = pickOf(TEXTS);
      userTexts.push(text);
      ev = { event: "info", message: r() < 0.7 ? `Round ${turn} follow-up: ${text}` : "hello" };
    } else if (k < 0.78) {
      ev = {
        event: pickOf([
          "error",
          "warning",
          "crash",
          "human_question",
          "session_end",
          "context_snapshot",
        ]),
        message: "m",
        data: { question: "q?", question_id: "q1", status: "completed", tokens: 5 },
        file: "turns/turn_001_context.json",
      };
    } else if (k < 0.80) {
      ev = { event: "session_relationship", data: { child_id: "sess", parent_id: `p${i}` } };
    } else if (k < 0.84) {
      turn++;
      ev = { event: "turn_start" };
    } else if (k < 0.87) {
      lines.push(pickOf(["not json", "", "[1,2]", '{"event":"x"}', '{"ts":1}']));
      continue;
    } else ev = { event: "unknown_event", data: { x: i } };
    lines.push(JSON.stringify({ ...ts, ...t, ...ev }) + (r() < 0.05 ? "\r" : ""));
  }
  return lines;
}

Deno.test("paged rows equal the whole-spine build, built at once or extended append by append", () =>
  withTempDir(async (root) => {
    const seed = Number(Deno.env.get("INTENDANT_SEED") ?? 20260524);
    const r = rng(seed);
    let extended = 0, rebuilt = 0, rows = 0;
    for (let s = 0; s < 60; s++) {
      const dir = join(root, `s${s}`);
      Deno.mkdirSync(join(dir, "turns"), { recursive: true });
      Deno.writeTextFileSync(join(dir, "turns", "turn_001_model.txt"), "one two three four");
      // No meta (no inference, no task fallback) or a valid one.
      const meta = s % 3 === 0
        ? { created: null, task: null }
        : { created: Date.UTC(2026, 4, 1, 9), task: s % 2 ? "meta task" : "" };
      if (meta.created !== null) {
        Deno.writeTextFileSync(
          join(dir, "session_meta.json"),
          JSON.stringify({
            session_id: "sess",
            created_at: "2026-05-01T09:00:00.000Z",
            created_at_ms: meta.created,
            project_root: "/p",
            name: null,
            task: meta.task,
            status: "running",
            last_turn: 0,
            role: null,
            rounds: 1,
          }),
        );
      }
      const lines = fuzzSpine(r, 20 + Math.floor(r() * 120));
      const spine = join(dir, "session.jsonl");
      const cache = new SpineCache();
      // Written in 1-4 appends, the index extended after each (the last one may be torn).
      const cuts = [
        0,
        ...Array.from({ length: Math.floor(r() * 4) }, () => Math.floor(r() * lines.length)),
        lines.length,
      ].sort((a, b) => a - b);
      Deno.writeTextFileSync(spine, "");
      for (let c = 1; c < cuts.length; c++) {
        const part = lines.slice(cuts[c - 1], cuts[c]).map((l) => l + "\n").join("");
        Deno.writeTextFileSync(spine, part, { append: true });
        const got = await newDetail(dir, "sess", cache);
        const want = await oldDetail(dir, meta);
        assert.deepEqual(got, want, `seed ${seed} session ${s} after append ${c}`);
        rows += got.length;
      }
      // A torn tail is not a row yet; completing it extends the index.
      Deno.writeTextFileSync(spine, '{"ts":"10:00:00.000","event":"error","mess', { append: true });
      assert.deepEqual(await newDetail(dir, "sess", cache), await oldDetail(dir, meta));
      Deno.writeTextFileSync(spine, 'age":"late"}\n', { append: true });
      assert.deepEqual(await newDetail(dir, "sess", cache), await oldDetail(dir, meta));
      extended += cache.extensions;
      rebuilt += cache.builds;
    }
    // deno-lint-ignore no-console
    console.log(
      `spine index: 60 fuzzed sessions, ${rows} rows compared, ${extended} extensions, ${rebuilt} builds (restarts on era changes included)`,
    );
    assert.ok(extended > 60, "appends extend the index");
  }));
