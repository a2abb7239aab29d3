/**
 * Session-log behaviour that needs real processes: concurrent appenders, kill -9 during
 * meta rewrites, and the crash hook on a real uncaught error.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { parseMeta, readSessionEvents, SessionLog } from "../lib/session_log/mod.ts";
import { DENO, REPO_ROOT, withTempDir } from "./helpers/temp.ts";

const CHILD = join(REPO_ROOT, "tests", "helpers", "session_child.ts");

function child(args: string[]) {
  return new Deno.Command(DENO, {
    args: ["run", "-A", CHILD, ...args],
    stdout: "piped",
    stderr: "piped",
  });
}

Deno.test("two processes appending 10,000 events each never interleave: every line parses", () =>
  withTempDir(async (root) => {
    const log = await SessionLog.create({
      logsDir: join(root, "logs"),
      tmpDir: root,
      meta: { projectRoot: "/p", task: "t" },
    });
    await log.close();
    const N = 10_000;
    const [a, b] = await Promise.all([
      child(["append", log.dir, String(N), "A"]).output(),
      child(["append", log.dir, String(N), "B"]).output(),
    ]);
    assert.equal(a.code, 0, new TextDecoder().decode(a.stderr));
    assert.equal(b.code, 0, new TextDecoder().decode(b.stderr));
    const r = await readSessionEvents(log.dir);
    assert.equal(r.malformed.length, 0);
    assert.equal(r.tornTailBytes, 0);
    for (const tag of ["A", "B"]) {
      const seen = r.events.filter((e) => (e.event.data as { tag?: string })?.tag === tag).map((
        e,
      ) => (e.event.data as { i: number }).i);
      assert.equal(seen.length, N);
      // Each writer's own lines stay in its order.
      assert.ok(seen.every((v, i) => v === i));
    }
    console.log(
      `lines written: ${2 * N}, parsed: ${r.events.length}, malformed: ${r.malformed.length}`,
    );
  }));

Deno.test("kill -9 during meta rewrites always leaves a valid session_meta.json", () =>
  withTempDir(async (root) => {
    const log = await SessionLog.create({
      logsDir: join(root, "logs"),
      tmpDir: root,
      meta: { projectRoot: "/p", task: "t" },
    });
    await log.close();
    const KILLS = 12;
    let invalid = 0;
    for (let k = 0; k < KILLS; k++) {
      const p = child(["meta", log.dir]).spawn();
      const reader = p.stdout.getReader();
      await reader.read(); // "ready"
      await new Promise((r) => setTimeout(r, 5 + Math.random() * 40));
      p.kill("SIGKILL");
      await p.status;
      reader.releaseLock();
      await p.stdout.cancel();
      await p.stderr.cancel();
      const m = parseMeta(Deno.readTextFileSync(join(log.dir, "session_meta.json")));
      if (!m.ok) invalid++;
    }
    console.log(`kill points tried: ${KILLS}, unparsable metas: ${invalid}`);
    assert.equal(invalid, 0);
  }));

Deno.test("an uncaught error is recorded by the crash hook: crash event, status failed, exit 70", () =>
  withTempDir(async (root) => {
    const out = await child(["crash", join(root, "logs")]).output();
    assert.equal(out.code, 70);
    const dir = new TextDecoder().decode(out.stdout).trim();
    assert.match(new TextDecoder().decode(out.stderr), /boom from the child/);
    const { events } = await readSessionEvents(dir);
    const names = events.map((e) => e.event.event);
    assert.ok(names.includes("crash"));
    assert.equal(names.at(-1), "session_end");
    const meta = parseMeta(Deno.readTextFileSync(join(dir, "session_meta.json")));
    assert.ok(meta.ok && meta.meta.status === "failed");
    assert.ok(Deno.statSync(join(dir, "summary.json")).isFile);
  }));
