/**
 * Sessions that wait for a person, end to end: the real runner (`intendant run`, spawned)
 * blocks on askHuman and prints ONE stderr line with the exact `intendant ctl answer`
 * command (which, run as printed, answers); the HTTP API (createApp over a real world)
 * reports the pending question, answers it, steers and rolls back through the same
 * functions `ctl` uses, refuses bad bodies, other origins, external sessions and stale
 * question ids, and never replaces an answer the runner has not taken yet nor reads a
 * planted (symlinked) question; and the live stream carries every status change
 * (waiting → running → completed), each after the lines written before it.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { readEvents, runIntendant, type Spawned, spawnIntendant, waitFor } from "./helpers/cli.ts";
import { buildWorld, PORT, type World } from "./helpers/world.ts";
import { withTempDir } from "./helpers/temp.ts";
import { QUESTION_NOTICE_MAX_CHARS } from "../lib/runner/mod.ts";
import { readMeta, writeMeta } from "../lib/session_log/mod.ts";
import { writeNativeSession } from "./helpers/native_corpus.ts";

const ORIGIN = `http://127.0.0.1:${PORT}`;

function writeScript(root: string, body: unknown): string {
  const p = join(root, `script-${crypto.randomUUID()}.jsonc`);
  Deno.writeTextFileSync(p, JSON.stringify(body));
  return p;
}

function post(w: World, path: string, body: unknown, headers: Record<string, string> = {}) {
  return w.get(path, {
    method: "POST",
    headers: { "content-type": "application/json", origin: ORIGIN, ...headers },
    body: typeof body === "string" ? body : JSON.stringify(body),
  });
}

function exists(p: string): boolean {
  try {
    Deno.lstatSync(p);
    return true;
  } catch {
    return false;
  }
}

function questionId(dir: string): string | null {
  try {
    return JSON.parse(Deno.readTextFileSync(join(dir, "human_question"))).question_id;
  } catch {
    return null;
  }
}

/** Longest wait for the stream to report "completed" (then the assertions say what came). */
const STREAM_TIMEOUT_MS = 40_000;

/** The session dir once printed; fails at once if the runner exits before printing it. */
function dirOf(run: Spawned): Promise<string> {
  return Promise.race([
    run.dir,
    run.done.then((r) => Promise.reject(new Error(`The runner exited early: ${r.stderr}`))),
  ]);
}

/** Reads a live stream in the background until the "completed" status or a timeout. */
function collectStream(w: World, id: string) {
  const ac = new AbortController();
  let text = "";
  const done = (async () => {
    const res = await w.get(`/api/session/${id}/stream?from_line=0`, {
      signal: ac.signal,
      headers: { origin: ORIGIN },
    });
    assert.equal(res.status, 200);
    const reader = res.body!.getReader();
    const dec = new TextDecoder();
    const timer = setTimeout(() => reader.cancel(), STREAM_TIMEOUT_MS);
    try {
      while (!/event: status\ndata: \{"status":"completed"\}/.test(text)) {
        const { value, done } = await reader.read();
        if (done) break;
        text += dec.decode(value, { stream: true });
      }
    } finally {
      clearTimeout(timer);
      ac.abort();
      await reader.cancel().catch(() => {});
    }
  })();
  return { text: () => text, done };
}

// ESC ] 0 ; title BEL (sets the window title), CSI 2J (erases the screen), a newline and
// bidi override, then enough text to be cut.
const HOSTILE_QUESTION = "Deploy\x1b]0;pwned\x07 now?\x1b[2J\nReally \u202eevil\u202c " +
  "x".repeat(400);

Deno.test("askHuman: the runner's stderr line, the printed command, and answer + steer over HTTP", () =>
  withTempDir(async (root) => {
    const w = await buildWorld(root);
    const script = writeScript(root, {
      turns: [
        { text: "Looking around.", ask_human: HOSTILE_QUESTION },
        // Each `sleep` holds "running" for several stream polls, so the stream must tell it.
        { commands: [{ exec: "sleep 1" }], ask_human: "Which branch should I release from?" },
        { text: "Releasing.", commands: [{ exec: "sleep 1" }], done: true },
      ],
    });
    const run = spawnIntendant(root, ["run", "--mock-script", script, "Release it"], {
      env: w.env,
    });
    try {
      const dir = await dirOf(run);
      const id = dir.split("/").at(-1)!;
      assert.ok(dir.startsWith(w.cfg.logsDir), "the runner writes where the daemon reads");
      await waitFor(() => run.stderrSoFar().includes("ctl answer"), 20_000, "blocked line");

      // ONE line, terminal-safe, the question cut, the exact command with the full id.
      const blocked = run.stderrSoFar().split("\n").filter((l) => l.includes("waiting for"));
      assert.equal(blocked.length, 1, run.stderrSoFar());
      const line = blocked[0]!;
      // deno-lint-ignore no-control-regex -- the point: no control character reached stderr
      assert.doesNotMatch(line, /[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e]/);
      assert.ok(line.startsWith(`intendant: session ${id} is waiting for an answer to "Deploy`));
      const shown = /to "(.*)" — run: /.exec(line)![1]!;
      assert.equal(Array.from(shown).length, QUESTION_NOTICE_MAX_CHARS);
      assert.ok(shown.endsWith("…") && shown.includes("now?") && shown.includes("Really evil"));
      assert.ok(line.endsWith(` — run: intendant ctl answer ${id} "…"`), line);

      // The detail reports the pending question while the session waits.
      const detail = await (await w.get(`/api/session/${id}`)).json();
      assert.equal(detail.session.status, "waiting");
      assert.equal(detail.pending_question.question_id, questionId(dir));
      assert.equal(detail.pending_question.question, HOSTILE_QUESTION);
      assert.equal(typeof detail.pending_question.asked_ms, "number");
      const stream = collectStream(w, id);

      // The printed command, with its placeholder filled in, answers the question.
      const cmd = /run: intendant (ctl answer \S+) "…"$/.exec(line)![1]!.split(" ");
      const ans = await runIntendant(root, [...cmd, "from the printed command"], {
        env: w.env,
      });
      assert.equal(ans.code, 0, ans.stderr);
      await waitFor(
        () => run.stderrSoFar().includes("Which branch"),
        20_000,
        "the second question",
      );
      const q2 = questionId(dir)!;
      assert.ok(q2);
      // The stream polls; under the parallel suite the refusals below can all run inside
      // one poll interval, and answering then would end the second wait before any poll
      // saw it. Let the stream observe it first (the order assertion below still checks it).
      await waitFor(
        () => (stream.text().match(/\{"status":"waiting"\}/g) ?? []).length >= 2,
        20_000,
        "the stream to report the second wait",
      );

      // Refusals: no token, another origin, bad bodies, a stale question id, non-native.
      const path = `/api/session/${id}/answer`;
      const noToken = await w.app.request(path, {
        method: "POST",
        headers: { host: `127.0.0.1:${PORT}`, "content-type": "application/json" },
        body: JSON.stringify({ text: "x" }),
      });
      assert.equal(noToken.status, 401);
      assert.equal(
        (await post(w, path, { text: "x" }, { origin: "http://evil.example" })).status,
        403,
      );
      for (const bad of [{ text: "" }, { text: " \n\t" }, {}, { text: 3 }, { text: "x", y: 1 }]) {
        const r = await post(w, path, bad);
        assert.equal(r.status, 400, JSON.stringify(bad));
        assert.equal((await r.json()).error, "bad_request");
      }
      assert.equal((await post(w, path, "not json")).status, 400);
      const stale = await post(w, path, { text: "late", question_id: "not-the-current-one" });
      assert.equal(stale.status, 409);
      const staleBody = await stale.json();
      assert.equal(staleBody.error, "question_changed");
      assert.equal(staleBody.pending_question.question_id, q2);
      const external = (await (await w.get("/api/sessions?source=codex&limit=1")).json())
        .sessions[0].key;
      const ext = await post(w, `/api/session/${encodeURIComponent(external)}/answer`, {
        text: "x",
      });
      assert.equal(ext.status, 400);
      assert.match((await ext.json()).message, /only native sessions/);
      const extDetail = await (await w.get(`/api/session/${encodeURIComponent(external)}`))
        .json();
      assert.equal("pending_question" in extDetail, false);
      const ghost = crypto.randomUUID();
      assert.equal((await post(w, `/api/session/${ghost}/answer`, { text: "x" })).status, 404);
      assert.equal(questionId(dir), q2, "no refused request touched the question");
      assert.equal(exists(join(dir, "human_response")), false);

      // Steer, then answer, over HTTP.
      const steer = await post(w, `/api/session/${id}/steer`, { text: "also tag it" });
      assert.equal(steer.status, 200);
      const steered = await steer.json();
      assert.equal(steered.queued, true);
      const ok = await post(w, path, { text: "release/2.0", question_id: q2 });
      assert.equal(ok.status, 200);
      assert.deepEqual(await ok.json(), { key: `intendant:${id}`, question_id: q2 });

      const r = await run.done;
      assert.equal(r.code, 0, r.stderr);
      assert.equal(r.stderr.split("\n").filter((l) => l.includes("waiting for")).length, 2);
      await stream.done;

      // The runner took both answers and the steer exactly as from `ctl`.
      const evs = readEvents(dir) as {
        event: string;
        turn?: number;
        data?: Record<string, unknown>;
      }[];
      const lane = evs.filter((e) => e.event === "conversation_message").map((e) => e.data!);
      assert.deepEqual(
        lane.filter((d) => d.provenance === "ask_human_answer").map((d) => d.text),
        ["from the printed command", "release/2.0"],
      );
      const delivered = evs.find((e) => e.event === "steer_delivered")!;
      assert.equal(delivered.data!.steer_id, steered.steer_id);
      assert.equal(delivered.turn, 3);
      assert.ok(lane.some((d) => d.provenance === "steer" && d.text === "also tag it"));

      // The stream told every status change, each after the lines written before it.
      const text = stream.text();
      const statuses = [...text.matchAll(/event: status\ndata: \{"status":"(\w+)"\}/g)].map((
        m,
      ) => m[1]);
      assert.deepEqual(statuses, ["waiting", "running", "waiting", "running", "completed"]);
      assert.ok(
        text.indexOf('"event":"session_end"') < text.indexOf('{"status":"completed"}'),
        "session_end arrives before the completed status",
      );
      assert.doesNotMatch(text, /event: status\nid:|id: \d+\nevent: status/);

      // Ended: nothing pending, steering refused, the detail says so.
      const end = await (await w.get(`/api/session/${id}`)).json();
      assert.equal(end.session.status, "completed");
      assert.equal(end.pending_question, null);
      const none = await post(w, path, { text: "again" });
      assert.equal(none.status, 404);
      assert.match((await none.json()).message, /has no pending question/);
      const late = await post(w, `/api/session/${id}/steer`, { text: "too late" });
      assert.equal(late.status, 409);
      const lateBody = await late.json();
      assert.equal(lateBody.error, "not_running");
      assert.doesNotMatch(lateBody.message, new RegExp(root), "no absolute path leaks");
    } finally {
      try {
        run.child.kill("SIGTERM");
      } catch {
        // Already exited.
      }
      await run.done;
    }
  }));

Deno.test("rollback over HTTP: queued while the session waits, applied at once when it ended", () =>
  withTempDir(async (root) => {
    const w = await buildWorld(root);
    const script = writeScript(root, {
      turns: [{ text: "Plan A." }, { ask_human: "OK?" }, { text: "Plan B.", done: true }],
    });
    const run = spawnIntendant(root, ["run", "--mock-script", script, "Plan"], { env: w.env });
    try {
      const dir = await dirOf(run);
      const id = dir.split("/").at(-1)!;
      await waitFor(() => questionId(dir) !== null, 20_000, "human_question");
      const path = `/api/session/${id}/rollback`;
      for (const bad of [{ to_seq: -1 }, { to_seq: "1" }, { to_seq: 1.5 }, {}]) {
        assert.equal((await post(w, path, bad)).status, 400, JSON.stringify(bad));
      }
      const queued = await post(w, path, { to_seq: 1 });
      assert.equal(queued.status, 200);
      assert.deepEqual(await queued.json(), { key: `intendant:${id}`, to_seq: 1, applied: false });
      assert.equal(
        (await post(w, `/api/session/${id}/answer`, { text: "fine" })).status,
        200,
      );
      assert.equal((await run.done).code, 0);
      const cut = (readEvents(dir) as { event: string; data?: Record<string, unknown> }[])
        .find((e) => e.event === "conversation_rewound")!;
      assert.equal(cut.data!.cut_after_seq, 1);
      const conv = Deno.readTextFileSync(join(dir, "conversation.jsonl")).trimEnd().split("\n")
        .map((l) => JSON.parse(l)).filter((m) => !("conversation" in m));
      assert.deepEqual(conv.map((m) => [m.seq, m.content]), [[1, "Plan"], [4, "Plan B."]]);

      // Ended: applied at once; a seq past the end is a 400 naming it.
      const applied = await post(w, path, { to_seq: 0 });
      assert.equal(applied.status, 200);
      assert.equal((await applied.json()).applied, true);
      const past = await post(w, path, { to_seq: 99 });
      assert.equal(past.status, 400);
      assert.match((await past.json()).message, /Cannot roll back to seq 99/);
    } finally {
      try {
        run.child.kill("SIGTERM");
      } catch {
        // Already exited.
      }
      await run.done;
    }
  }));

Deno.test("answer guards: an untaken answer is not replaced, a planted question is never read", () =>
  withTempDir(async (root) => {
    const w = await buildWorld(root);
    // A session that waits with no runner attached: nothing consumes human_response.
    const { id, dir } = await writeNativeSession(w.cfg.logsDir, { turns: 1 });
    const m = await readMeta(dir);
    assert.ok(m.ok);
    await writeMeta(dir, { ...m.meta, status: "waiting" });
    const path = `/api/session/${id}/answer`;
    Deno.writeTextFileSync(
      join(dir, "human_question"),
      JSON.stringify({ question_id: "q-1", question: "Ship it?" }),
    );
    assert.equal((await post(w, path, { text: "yes", question_id: "q-1" })).status, 200);
    const second = await post(w, path, { text: "no!", question_id: "q-1" });
    assert.equal(second.status, 409);
    assert.equal((await second.json()).error, "already_answered");
    assert.deepEqual(JSON.parse(Deno.readTextFileSync(join(dir, "human_response"))), {
      question_id: "q-1",
      text: "yes",
    });
    // A symlinked question file is refused: not pending, and nothing is written.
    Deno.removeSync(join(dir, "human_question"));
    Deno.removeSync(join(dir, "human_response"));
    const outside = join(root, "planted.json");
    Deno.writeTextFileSync(outside, JSON.stringify({ question_id: "x", question: "CANARY" }));
    Deno.symlinkSync(outside, join(dir, "human_question"));
    const detail = await (await w.get(`/api/session/${id}`)).json();
    assert.equal(detail.pending_question, null);
    assert.equal((await post(w, path, { text: "leak?" })).status, 404);
    assert.equal(exists(join(dir, "human_response")), false);
  }));
