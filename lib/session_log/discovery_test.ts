import assert from "node:assert/strict";
import { join } from "node:path";
import { findSession, listSessions, mostRecentForProject } from "./discovery.ts";
import { SessionLog } from "./session_log.ts";
import { AmbiguousPrefixError, InvalidInputError, NotFoundError } from "../errors.ts";
import { withTempDir } from "../../tests/helpers/temp.ts";

async function make(
  logsDir: string,
  id: string,
  t: number,
  d: { project?: string; role?: string | null } = {},
) {
  const log = await SessionLog.create({
    logsDir,
    tmpDir: logsDir,
    now: () => t,
    meta: { projectRoot: d.project ?? "/p", task: "t", role: d.role ?? null, sessionId: id },
  });
  await log.close();
  return log;
}

Deno.test("sessions list newest first; broken metas are reported, not fatal", () =>
  withTempDir(async (root) => {
    const logsDir = join(root, "logs");
    await make(logsDir, "aaaa1111-0000", 1000);
    await make(logsDir, "bbbb2222-0000", 3000);
    await make(logsDir, "cccc3333-0000", 2000);
    Deno.mkdirSync(join(logsDir, "broken"));
    Deno.writeTextFileSync(join(logsDir, "broken", "session_meta.json"), "{nope");
    const { sessions, invalid } = await listSessions(logsDir);
    assert.deepEqual(sessions.map((s) => s.meta.session_id), [
      "bbbb2222-0000",
      "cccc3333-0000",
      "aaaa1111-0000",
    ]);
    assert.equal(invalid.length, 1);
    assert.match(invalid[0]!.reason, /not JSON/);
    assert.deepEqual(await listSessions(join(root, "missing")), { sessions: [], invalid: [] });
  }));

Deno.test("find by full id or unique prefix; ambiguity names the candidates; bad grammar refused", () =>
  withTempDir(async (root) => {
    const logsDir = join(root, "logs");
    await make(logsDir, "abc12345-1", 1);
    await make(logsDir, "abc99999-2", 2);
    assert.equal((await findSession(logsDir, "abc1")).meta.session_id, "abc12345-1");
    assert.equal((await findSession(logsDir, "abc99999-2")).meta.session_id, "abc99999-2");
    await assert.rejects(
      findSession(logsDir, "abc"),
      (e) =>
        e instanceof AmbiguousPrefixError && /"abc12345-1"/.test(e.message) &&
        /"abc99999-2"/.test(e.message),
    );
    await assert.rejects(findSession(logsDir, "zzz"), NotFoundError);
    for (const bad of ["../etc", "a/b", "", "x\0"]) {
      await assert.rejects(findSession(logsDir, bad), InvalidInputError);
    }
  }));

Deno.test("most recent top-level session of a project skips sub-agent roles and other projects", () =>
  withTempDir(async (root) => {
    const logsDir = join(root, "logs");
    await make(logsDir, "s1", 1, { project: "/a" });
    await make(logsDir, "s2", 2, { project: "/a" });
    await make(logsDir, "s3", 3, { project: "/a", role: "research" });
    await make(logsDir, "s4", 4, { project: "/b" });
    assert.equal((await mostRecentForProject(logsDir, "/a"))?.meta.session_id, "s2");
    assert.equal(await mostRecentForProject(logsDir, "/c"), null);
  }));
