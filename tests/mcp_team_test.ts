/**
 * `intendant mcp --team URL` end to end (issue 19): the official MCP SDK client spawns the
 * real program under its locked mcp profile (`deno run -P=launch main.ts mcp --locked`)
 * against a real throwaway PostgreSQL (tests/helpers/pg_cluster.ts), migrated and loaded
 * with the rows of two machines the way lib/team/team_search_test.ts loads them (toRecordRow
 * + INSERTs: the publisher is not needed). Covered: the team schemas (a `machine` argument
 * only with a team), search across both machines naming each, the machine filter, an API
 * key masked in search snippets and in a remote read, a remote read centred on a hit's
 * locator and marked remote, this machine's local session still read from its files, the
 * schema missing (the `team init` hint), and the database going away mid-session (one-line
 * isError, the server keeps answering, and reconnects when the database is back).
 * The database is reached through a loopback TCP forwarder owned by the test, so "down"
 * and "back" are real refused/reset connections while the cluster itself survives; the
 * last step stops the real cluster.
 * On the code before this change `mcp` refuses the unknown flag `--team`: connect fails.
 */
import { loadTeamRows, textRecords } from "./helpers/team_rows.ts";
import { callTool as call, connectMcp as connect } from "./helpers/mcp_client.ts";
import { plantUserMessage as plant } from "./fixtures/plant.ts";
import assert from "node:assert/strict";
import { join } from "node:path";
import { buildAllFixtures } from "./fixtures/all.ts";
import { hermeticEnv, withTempDir } from "./helpers/temp.ts";
import { type PgCluster, withPgCluster } from "./helpers/pg_cluster.ts";
import type { MessageRecord, Source } from "../lib/message_search/mod.ts";
import { migrateTeamDb, openTeamDb, parseTeamUrl, type TeamDb } from "../lib/team/mod.ts";

const WORD = "quixotically";
const NOW = Date.now();

/** A random body in [A-Za-z0-9] that has every class (a real key's shape, never a real key). */
function keyBody(n: number): string {
  const cs = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
  const r = crypto.getRandomValues(new Uint8Array(n - 3));
  return "aQ7" + [...r].map((b) => cs[b % cs.length]).join("");
}

interface Sess {
  machine: string;
  source: Source;
  id: string;
  texts: string[];
}

/** NOW is the session's last message; one minute between messages. */
const recordsOf = (s: Sess): MessageRecord[] => textRecords({ ...s, endMs: NOW - 60_000 });

/** Loads `sessions` as published rows at revision 1 (team_search_test.ts's way). */
async function loadReplica(db: TeamDb, sessions: readonly Sess[]): Promise<void> {
  await loadTeamRows(
    db,
    sessions.map((s) => ({
      machine: s.machine,
      key: `${s.source}:${s.id}`,
      source: s.source,
      id: s.id,
      title: `title of ${s.id}`,
      project: "/work/p",
      recs: recordsOf(s),
    })),
    1,
  );
}

/** A loopback TCP forwarder to `target`: down() refuses and resets, up() serves again. */
function forwarder(target: number) {
  const l0 = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (l0.addr as Deno.NetAddr).port;
  l0.close();
  let listener: Deno.Listener | null = null;
  const conns = new Set<Deno.Conn>();
  const pipe = async (a: Deno.Conn, b: Deno.Conn) => {
    try {
      await a.readable.pipeTo(b.writable);
    } catch { /* the other side closed: ends the pair */ }
    for (const c of [a, b]) {
      try {
        c.close();
      } catch { /* already closed */ }
      conns.delete(c);
    }
  };
  const up = () => {
    listener = Deno.listen({ hostname: "127.0.0.1", port });
    const l = listener;
    (async () => {
      for await (const c of l) {
        let t: Deno.Conn;
        try {
          t = await Deno.connect({ hostname: "127.0.0.1", port: target });
        } catch {
          c.close(); // the target is down: the client sees its connection closed
          continue;
        }
        conns.add(c).add(t);
        void pipe(c, t);
        void pipe(t, c);
      }
    })().catch(() => {});
  };
  const down = () => {
    listener?.close();
    listener = null;
    for (const c of conns) {
      try {
        c.close();
      } catch { /* already closed */ }
    }
    conns.clear();
  };
  up();
  return { port, up, down };
}

function lockedArgvOf(pid: number): string[] {
  for (let i = 0; i < 100; i++) {
    const kids = Deno.readTextFileSync(`/proc/${pid}/task/${pid}/children`).trim().split(/\s+/)
      .filter(Boolean);
    if (kids.length) {
      return Deno.readTextFileSync(`/proc/${kids[0]}/cmdline`).split("\0").filter(Boolean);
    }
  }
  throw new Error(`process ${pid} has no child`);
}

/** A hermetic home with this machine's codex session, and the team env (no password). */
async function setup(root: string, pg: PgCluster, o: { port: number; database?: string }) {
  const fixtures = await buildAllFixtures(root);
  plant(fixtures.homes.codex!, `${WORD} local to this machine`);
  Deno.mkdirSync(join(root, "tmp"), { recursive: true });
  const env = {
    PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin",
    NO_COLOR: "1",
    ...hermeticEnv(root, fixtures.env),
    INTENDANT_MACHINE: "alpha",
    PGPASSWORD: pg.password,
  };
  const url = `postgres://${pg.superuser}@127.0.0.1:${o.port}/${o.database ?? "postgres"}`;
  return { env, url, localKey: fixtures.homes.codex!.appendTarget.key };
}

const oneLine = (s: string) => s.trim().split("\n").length === 1;

Deno.test("intendant mcp --team searches and reads the team database under the locked profile", async () => {
  await withPgCluster(async (pg) => {
    await withTempDir(async (root) => {
      const secret = `sk-proj-${keyBody(48)}`;
      const db = await openTeamDb(parseTeamUrl(pg.url));
      try {
        await migrateTeamDb(db, { binaryVersion: "test" });
        await loadReplica(db, [
          { machine: "alpha", source: "codex", id: "alpha-s1", texts: [`${WORD} on alpha`, "ok"] },
          {
            machine: "beta",
            source: "claude-code",
            id: "beta-s1",
            texts: [
              ...Array.from({ length: 30 }, (_, i) => `filler ${i}`),
              `${WORD} on beta with key ${secret} kept`,
              "after the key",
            ],
          },
        ]);
      } finally {
        await db.close();
      }
      const { env, url, localKey } = await setup(root, pg, { port: pg.port });

      // Without a team: the local schemas, no machine argument anywhere.
      const plain = await connect(env);
      try {
        const { tools } = await plain.client.listTools();
        for (const t of tools) assert.ok(!("machine" in (t.inputSchema.properties ?? {})), t.name);
        // (An unknown argument is dropped by the SDK's schema: the local index answers.)
        const r = await call(plain.client, "search_messages", { query: WORD, machine: ["beta"] });
        assert.match(r.text, /answered by the local index/);
        assert.doesNotMatch(r.text, /^> machine: /m);
      } finally {
        await plain.client.close();
      }

      const { client, pid, stderr } = await connect(env, ["--team", url]);
      try {
        const argv = lockedArgvOf(pid!);
        assert.ok(argv.includes("-P=mcp"), argv.join(" "));
        const net = argv.find((a) => a.startsWith("--allow-net="))!;
        assert.ok(net.split(",").includes(`127.0.0.1:${pg.port}`), net);
        assert.ok(!argv.some((a) => /^--allow-(all|run|ffi|sys)|^-A$/.test(a)), argv.join(" "));

        const { tools } = await client.listTools();
        const search = tools.find((t) => t.name === "search_messages")!;
        const read = tools.find((t) => t.name === "read_session")!;
        assert.ok("machine" in (search.inputSchema.properties ?? {}));
        assert.ok("machine" in (read.inputSchema.properties ?? {}));
        assert.match(search.description!, /team database/);
        assert.match(search.description!, /lag this machine's newest messages by one publish/);

        // Both machines, each named; the key masked in the snippet.
        const all = await call(client, "search_messages", { query: WORD });
        assert.equal(all.isError, false, all.text + stderr());
        assert.match(all.text, /answered by the team database/);
        assert.match(all.text, /^> machine: alpha\n> session: codex:alpha-s1$/m);
        assert.match(all.text, /^> machine: beta\n> session: claude-code:beta-s1$/m);
        assert.match(all.text, /«quixotically» on beta with key sk-p…\[openai key\] kept/);
        assert.ok(!all.text.includes(secret), "the key is masked in search");
        assert.ok(!all.text.includes(localKey), "search covers the team, not the local index");
        assert.match(all.text, /^> resume \(on that machine\): .*claude --resume beta-s1/m);

        // The machine filter narrows; a bad name is refused by the schema.
        const beta = await call(client, "search_messages", { query: WORD, machine: ["beta"] });
        assert.equal(beta.isError, false, beta.text);
        assert.match(beta.text, /^> machine: beta$/m);
        assert.doesNotMatch(beta.text, /^> machine: alpha$/m);
        const bad = await call(client, "search_messages", { query: WORD, machine: ["a b"] });
        assert.equal(bad.isError, true);
        assert.match(bad.text, /a machine name is 1-\d+ letters, digits/);
        // One machine may be named without a list (issue 25): the same answer.
        const betaOne = await call(client, "search_messages", { query: WORD, machine: "beta" });
        assert.equal(betaOne.isError, false, betaOne.text);
        assert.equal(betaOne.text, beta.text);

        // A remote read centred on the hit, masked, marked remote.
        const locator = /hit=(h\S+)/.exec(beta.text)?.[1];
        assert.ok(locator, beta.text);
        const remote = await call(client, "read_session", {
          machine: "beta",
          session_key: "claude-code:beta-s1",
          locator,
          limit: 6,
        });
        assert.equal(remote.isError, false, remote.text);
        assert.match(
          remote.text,
          /^Session on another machine \(REMOTE: read from the team database;.*\n> machine: beta$/m,
        );
        assert.match(
          remote.text,
          /\[30\] \S+ user {2}<- located hit\n> quixotically on beta with key sk-p…\[openai key\] kept/,
        );
        assert.ok(!remote.text.includes(secret), "the key is masked in a remote read");
        assert.match(remote.text, /entries 27–31 of 32/);
        assert.match(remote.text, /Earlier entries: offset=21/);
        // Paging by offset: the whole session, nothing skipped.
        const page0 = await call(client, "read_session", {
          machine: "beta",
          session_key: "claude-code:beta-s1",
          limit: 20,
        });
        assert.match(page0.text, /\[19\] [^\n]*\n> filler 19\n/);
        assert.match(page0.text, /offset=20/);
        const gone = await call(client, "read_session", {
          machine: "beta",
          session_key: "claude-code:nope",
        });
        assert.equal(gone.isError, true);
        assert.match(gone.text, /^read_session: No session "claude-code:nope" on machine "beta"/);

        // This machine's session: read from its files (no machine, or its own name) …
        const local = await call(client, "read_session", { session_key: localKey, limit: 200 });
        assert.equal(local.isError, false, local.text);
        assert.match(local.text, /> quixotically local to this machine/);
        assert.match(local.text, /^> resume: codex resume /m);
        // … and one it no longer has locally falls back to its published copy.
        const own = await call(client, "read_session", {
          machine: "alpha",
          session_key: "codex:alpha-s1",
        });
        assert.equal(own.isError, false, own.text);
        assert.match(own.text, /REMOTE: read from the team database/);
      } finally {
        await client.close();
      }
    });
  });
});

Deno.test("intendant mcp --team: schema missing and the database down are one-line tool errors", async () => {
  await withPgCluster(async (pg) => {
    await withTempDir(async (root) => {
      const db = await openTeamDb(parseTeamUrl(pg.url));
      try {
        await db.sql.unsafe(
          `CREATE DATABASE empty_team TEMPLATE template0 ENCODING 'UTF8' ` +
            `LC_COLLATE '${pg.locale}' LC_CTYPE '${pg.locale}'`,
        );
        await migrateTeamDb(db, { binaryVersion: "test" });
        await loadReplica(db, [
          { machine: "beta", source: "codex", id: "beta-s2", texts: [`${WORD} from beta`] },
        ]);
      } finally {
        await db.close();
      }
      const fwd = forwarder(pg.port);

      // No schema: the hint to run team init, and the server keeps serving.
      const empty = await setup(join(root, "e"), pg, { port: pg.port, database: "empty_team" });
      const e = await connect(empty.env, ["--team", empty.url]);
      try {
        const r = await call(e.client, "search_messages", { query: WORD });
        assert.equal(r.isError, true, r.text);
        assert.ok(oneLine(r.text), r.text);
        assert.match(
          r.text,
          /^search_messages: The team database has no intendant schema yet: run `intendant team init --team URL`$/,
        );
        assert.equal((await call(e.client, "index_status")).isError, false);
      } finally {
        await e.client.close();
      }

      const { env, url } = await setup(join(root, "d"), pg, { port: fwd.port });
      const { client } = await connect(env, ["--team", url]);
      try {
        const ok = await call(client, "search_messages", { query: WORD });
        assert.equal(ok.isError, false, ok.text);
        assert.match(ok.text, /^> machine: beta$/m);

        // Down: the open pool's connections are reset and new ones refused.
        fwd.down();
        const down = await call(client, "search_messages", { query: WORD });
        assert.equal(down.isError, true, down.text);
        assert.ok(oneLine(down.text), down.text);
        assert.match(
          down.text,
          /^search_messages: (The team database postgres:\/\/\S+ failed to answer: |Cannot open team database postgres:\/\/\S+: connection refused)/,
        );
        assert.ok(!down.text.includes(pg.password));
        const remoteDown = await call(client, "read_session", {
          machine: "beta",
          session_key: "codex:beta-s2",
        });
        assert.equal(remoteDown.isError, true);
        assert.match(
          remoteDown.text,
          /^read_session: Cannot open team database .*connection refused/,
        );
        // The server still answers, locally and for the team.
        assert.equal((await call(client, "index_status")).isError, false);
        assert.equal((await call(client, "list_sessions")).isError, false);

        // Back: the next call reconnects, no restart.
        fwd.up();
        const back = await call(client, "search_messages", { query: WORD });
        assert.equal(back.isError, false, back.text);
        assert.match(back.text, /^> machine: beta$/m);

        // The real cluster stopped.
        await pg.stop();
        const stopped = await call(client, "search_messages", { query: WORD });
        assert.equal(stopped.isError, true, stopped.text);
        assert.ok(oneLine(stopped.text), stopped.text);
        assert.match(stopped.text, /^search_messages: .*team database/);
        assert.equal((await call(client, "index_status")).isError, false);
      } finally {
        fwd.down();
        await client.close();
      }
    });
  });
});
