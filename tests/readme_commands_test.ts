/**
 * Every command the README shows, run exactly as printed (issue 25): the lines of its
 * ```sh blocks (continuations joined, `# comments` dropped), plus the inline examples a
 * user types — `deno task search café` and `intendant <command> --help` for every command
 * of the Commands table. Each runs in a hermetic world: a copy of this checkout without
 * node_modules (the user's fresh clone; the commands install its packages themselves, from
 * this run's Deno cache, so nothing is fetched), HOME a temp dir (every agent home and the state root default under it), a free port as
 * INTENDANT_PORT where a daemon starts, and a PATH with NO deno on it (`/usr/bin:/bin`)
 * except for commands that run deno themselves, whose PATH holds only tools/deno's deno.
 * Only the README's own placeholders are filled (DIR, /anywhere, /path/to/intendant.js,
 * ID_OR_PREFIX / ID / SESSION, the team URL's `owner@db.example`, 8765, `[optional]`
 * flags left out); each command must do what the README says (exit 0 and its key output).
 * A command no runner here recognises FAILS the test: a new README command needs a
 * runner, and a README edit to a command that no longer works is caught.
 * Equivalents, and why: the first screen's `npx -y deno@2.9.6 task …` runs as `deno task
 * …` (the README's own "drop the prefix"), after checking the prefix names the Deno this
 * suite runs on (`.ci/run` runs the npx form itself); `task test` runs one small test file,
 * not the whole suite recursively. Daemons (`deno task start`, `intendant serve`, the
 * single file's `serve --locked`, the manual-flags example) run until their API answers
 * with the token from daemon.json, then get SIGTERM and must exit 0. The team block needs
 * a real PostgreSQL: a throwaway cluster (tests/helpers/pg_cluster.ts) stands in for
 * db.example; without PostgreSQL those lines are skipped with the reason printed (under
 * CI=true the helper fails instead).
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { buildCodexFixture } from "./fixtures/codex_fixture.ts";
import { waitFor } from "./helpers/cli.ts";
import { denoDir } from "./helpers/deno_dir.ts";
import { type PgCluster, startPgCluster } from "./helpers/pg_cluster.ts";
import { DENO, REPO_ROOT, withTempDir } from "./helpers/temp.ts";
import { resolveConfig } from "../lib/config.ts";
import { profileFlags, serveProfile } from "../lib/permissions.ts";
import { openTeamDb, parseTeamUrl } from "../lib/team/mod.ts";

const dec = new TextDecoder();
const README = Deno.readTextFileSync(join(REPO_ROOT, "README.md"));
/** A PATH as a fresh machine has it (no deno: checked below). */
const BARE_PATH = "/usr/bin:/bin";

/** The commands of the README's ```sh blocks, in order: one per line, continuations joined. */
export function readmeShellCommands(md: string): string[] {
  const out: string[] = [];
  for (const block of md.matchAll(/^```sh\n([\s\S]*?)^```$/gm)) {
    const joined = block[1]!.replace(/\\\n\s*/g, "");
    for (const raw of joined.split("\n")) {
      // A comment starts at an unquoted " #" (no README command quotes a "#").
      const line = raw.replace(/\s+#\s.*$/, "").trim();
      if (line) out.push(line);
    }
  }
  return out;
}

/** The command names of the README's Commands table (first column: `intendant <name> …`). */
export function tableCommands(md: string): string[] {
  const names = new Set<string>();
  const table = md.slice(
    md.indexOf("## Commands"),
    md.indexOf("\n## ", md.indexOf("## Commands") + 3),
  );
  for (const row of table.split("\n").filter((l) => l.startsWith("| `intendant "))) {
    const first = row.split(" | ")[0]!;
    for (const m of first.matchAll(/`intendant ([a-z]+)/g)) names.add(m[1]!);
  }
  return [...names];
}

/** The inline examples run besides the blocks (each must still be in the README, as printed). */
const INLINE = ["deno task search café"];

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

/** The world the commands run in, and what earlier commands left for later ones. */
interface World {
  root: string;
  clone: string;
  home: string;
  denoPath: string;
  env: Record<string, string>;
  /** Results kept for later commands: session ids, the team cluster, the machine password. */
  firstSession?: string;
  waiting?: { id: string; run: Promise<Run>; out: { stdout: string; stderr: string } };
  pg?: PgCluster | null;
  teamEnv?: Record<string, string>;
  done: Set<string>;
}

/** Runs `line` with sh in `cwd`; deno-running lines get tools/deno on PATH, others none. */
async function sh(w: World, line: string, o: { cwd?: string; env?: Record<string, string> } = {}) {
  const r = await shCommand(w, line, o).output();
  return { code: r.code, stdout: dec.decode(r.stdout), stderr: dec.decode(r.stderr) };
}

function shCommand(w: World, line: string, o: { cwd?: string; env?: Record<string, string> }) {
  // A line that runs deno (first program, after an optional `cd … &&`) gets a PATH whose only
  // deno is tools/deno's; everything else runs with the bare PATH plus the installed bin.
  const runsDeno = /^(cd \S+ && )?deno /.test(line);
  const PATH = runsDeno
    ? `${w.denoPath}:${BARE_PATH}`
    : `${join(w.home, ".deno", "bin")}:${BARE_PATH}`;
  return new Deno.Command("/bin/sh", {
    args: ["-c", line],
    cwd: o.cwd ?? w.clone,
    clearEnv: true,
    env: { ...w.env, PATH, ...o.env },
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  });
}

function ok(r: Run, line: string): Run {
  assert.equal(r.code, 0, `\`${line}\` exited ${r.code}:\n${r.stderr}\n${r.stdout}`);
  return r;
}

function freePort(): number {
  const l = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (l.addr as Deno.NetAddr).port;
  l.close();
  return port;
}

/**
 * Starts the daemon `line` (INTENDANT_PORT a free port), waits until its API answers with
 * the token from `<state-root>/daemon.json` (and `until` holds on its stdout), stops the
 * serving process with SIGTERM and asserts every process exited 0. Returns the output.
 */
async function daemon(
  w: World,
  line: string,
  o: { cwd?: string; env?: Record<string, string>; until?: RegExp; port?: number } = {},
): Promise<Run & { port: number }> {
  const port = o.port ?? freePort();
  const daemonJson = join(w.home, ".intendant", "daemon.json");
  const child = shCommand(w, line, { ...o, env: { INTENDANT_PORT: String(port), ...o.env } })
    .spawn();
  const out = { stdout: "", stderr: "" };
  const pump = async (s: ReadableStream<Uint8Array>, k: "stdout" | "stderr") => {
    const d = new TextDecoder();
    for await (const c of s) out[k] += d.decode(c, { stream: true });
  };
  let exited = false;
  const done = Promise.all([
    child.status,
    pump(child.stdout, "stdout"),
    pump(child.stderr, "stderr"),
  ])
    .then(([s]) => ((exited = true), s.code));
  let pid: number | null = null;
  try {
    await waitFor(
      async () => {
        if (exited) return true;
        try {
          const info = JSON.parse(Deno.readTextFileSync(daemonJson));
          if (info.port !== port) return false;
          const r = await fetch(`http://127.0.0.1:${port}/api/coverage`, {
            headers: { authorization: `Bearer ${info.token}` },
          });
          await r.body?.cancel();
          pid = info.pid;
          return r.status === 200 && (!o.until || o.until.test(out.stdout));
        } catch {
          return false;
        }
      },
      90_000,
      `\`${line}\` to answer`,
    );
    assert.ok(!exited, `\`${line}\` exited before answering:\n${out.stderr}\n${out.stdout}`);
  } finally {
    // The serving process (the locked child, under a launcher and sh): its clean exit
    // carries through every parent.
    if (pid !== null) Deno.kill(pid, "SIGTERM");
    else if (!exited) child.kill("SIGKILL");
  }
  const code = await done;
  assert.equal(code, 0, `\`${line}\` exited ${code}:\n${out.stderr}`);
  assert.throws(() => Deno.statSync(daemonJson), Deno.errors.NotFound, "daemon.json removed");
  return { code, ...out, port };
}

/** A runner: the README lines it takes, and what it asserts. */
interface Runner {
  match: RegExp;
  run(w: World, line: string, m: RegExpMatchArray): Promise<void>;
}

const ASK_SCRIPT = JSON.stringify({
  turns: [{ ask_human: "Which branch?" }, { ask_human: "Anything else?" }, {
    text: "Done.",
    done: true,
  }],
});

/** The id printed by `run` (`session <id>`). */
function sessionId(r: Run): string {
  const id = /^session (\S+)$/m.exec(r.stdout)?.[1];
  assert.ok(id, r.stdout);
  return id;
}

/** A session blocked on its question `q` (ctl answer/steer need a live one). */
async function waitingSession(w: World, q: string): Promise<NonNullable<World["waiting"]>> {
  if (!w.waiting) {
    const script = join(w.root, "ask.json");
    Deno.writeTextFileSync(script, ASK_SCRIPT);
    const child = shCommand(w, `deno task run --mock-script ${script} "ask me"`, {}).spawn();
    const out = { stdout: "", stderr: "" };
    const pump = async (s: ReadableStream<Uint8Array>, k: "stdout" | "stderr") => {
      const d = new TextDecoder();
      for await (const c of s) out[k] += d.decode(c, { stream: true });
    };
    const run = Promise.all([
      child.status,
      pump(child.stdout, "stdout"),
      pump(child.stderr, "stderr"),
    ])
      .then(([s]) => ({ code: s.code, ...out }));
    await waitFor(() => /^session \S+$/m.test(out.stdout), 30_000, "the asking session");
    w.waiting = { id: sessionId({ code: 0, ...out }), run, out };
  }
  const { out } = w.waiting;
  await waitFor(() => out.stderr.includes(`waiting for an answer to "${q}"`), 30_000, q);
  return w.waiting;
}

const RUNNERS: Runner[] = [
  {
    // The first screen: `npx -y deno@<v> task start|test`.
    match: /^npx -y deno@(\S+) task (start|test)$/,
    async run(w, _line, m) {
      // The prefix fetches the Deno this suite runs on (and tools/deno pins).
      assert.equal(m[1], Deno.version.deno, "the README's npx prefix names this suite's Deno");
      const pinned = JSON.parse(
        Deno.readTextFileSync(join(REPO_ROOT, "tools", "deno", "package.json")),
      ).devDependencies.deno;
      assert.equal(m[1], pinned, "tools/deno/package.json pins the README's Deno");
      if (m[2] === "start") {
        // Its equivalent, `deno task start`: the locked daemon, its link, its sources, its sweep.
        const r = await daemon(w, "deno task start", { until: /^First sweep done in /m });
        assert.match(
          r.stdout,
          new RegExp(`^Open: http://127\\.0\\.0\\.1:${r.port}/\\?token=\\S+$`, "m"),
        );
        assert.match(r.stdout, /^ {2}codex +found +\S+\/\.codex\/sessions$/m);
        assert.match(r.stdout, /^First sweep done in [\d.]+ s: \d+ sessions/m);
        // Quietly, and nothing but the runtime's packages (issue 25 item 15): the clone gets
        // runtime/node_modules and no node_modules of the dev config at all.
        assert.doesNotMatch(r.stderr, /^(Download|Initialize|Warning) /m);
        assert.throws(() => Deno.lstatSync(join(w.clone, "node_modules")), Deno.errors.NotFound);
        const installed = [...Deno.readDirSync(join(w.clone, "runtime", "node_modules", ".deno"))]
          .map((e) => e.name);
        assert.ok(installed.some((n) => n.startsWith("hono@")), installed.join(" "));
        for (const n of installed) {
          assert.doesNotMatch(n, /^(playwright-core|esbuild|@esbuild|fast-check|preact|htm)@/);
        }
        w.done.add("start");
      } else {
        // `deno task test`, on one small file (the whole suite is what runs this test).
        const r = ok(await sh(w, "deno task test lib/config_test.ts"), "deno task test");
        assert.match(r.stdout, /^ok \| \d+ passed \| 0 failed/m);
      }
    },
  },
  {
    match: /^deno task install( --root DIR)?$/,
    async run(w, line, m) {
      const root = m[1] ? join(w.root, "DIR") : join(w.home, ".deno");
      ok(await sh(w, line.replace(" DIR", ` ${root}`)), line);
      const bin = join(root, "bin", "intendant");
      const v = ok(await sh(w, `${bin} --version`), `${bin} --version`);
      assert.match(v.stdout, /^intendant \d+\.\d+\.\d+\n$/);
    },
  },
  {
    match: /^deno task build && deno task install dist\/intendant\.js$/,
    async run(w, line) {
      ok(await sh(w, line), line);
      Deno.statSync(join(w.clone, "dist", "intendant.js"));
      const shim = Deno.readTextFileSync(join(w.home, ".deno", "bin", "intendant"));
      assert.match(shim, /dist\/intendant\.js/);
      assert.match(
        ok(await sh(w, "intendant --version"), "intendant --version").stdout,
        /^intendant /,
      );
      w.done.add("build");
    },
  },
  {
    match: /^deno task build$/,
    async run(w, line) {
      ok(await sh(w, line), line);
      Deno.statSync(join(w.clone, "dist", "intendant.js"));
      Deno.statSync(join(w.clone, "ui", "gen", "bundle.ts"));
      w.done.add("build");
    },
  },
  {
    match: /^intendant mcp --print-config (claude|codex|gemini|cursor)$/,
    async run(w, line, m) {
      const r = ok(await sh(w, line), line);
      if (m[1] === "claude") assert.match(r.stdout, /^claude mcp add --scope user /);
      else if (m[1] === "codex") assert.match(r.stdout, /^\[mcp_servers\.intendant\]$/m);
      else assert.ok(JSON.parse(r.stdout).mcpServers.intendant.command, r.stdout);
    },
  },
  {
    // The team block: the README's `owner@db.example` is a throwaway cluster's superuser.
    match:
      /^(intendant team |export INTENDANT_TEAM_URL=|intendant serve$|intendant search --machine )/,
    async run(w, line) {
      if (w.pg === undefined) {
        w.pg = await startPgCluster();
        if (w.pg) {
          const db = await openTeamDb(parseTeamUrl(w.pg.url));
          try {
            await db.sql.unsafe(
              `CREATE DATABASE intendant TEMPLATE template0 ENCODING 'UTF8' ` +
                `LC_COLLATE '${w.pg.locale}' LC_CTYPE '${w.pg.locale}'`,
            );
          } finally {
            await db.close();
          }
        }
      }
      const pg = w.pg;
      if (!pg) {
        console.log(`SKIPPED (no PostgreSQL >= 15 here): ${line}`);
        return;
      }
      const filled = line.replaceAll("owner@db.example", `${pg.superuser}@127.0.0.1:${pg.port}`)
        .replaceAll("@db.example", `@127.0.0.1:${pg.port}`);
      const asOwner = { PGPASSWORD: pg.password };
      if (filled.startsWith("intendant team init ")) {
        const r = ok(await sh(w, filled, { env: asOwner }), line);
        assert.match(r.stdout, /schema/i);
      } else if (filled.startsWith("intendant team add-machine ")) {
        const r = ok(await sh(w, filled, { env: asOwner }), line);
        const pw = /^ {2}postgres:\/\/intendant_m_laptop-a:([0-9a-f]{40})@\S+$/m.exec(r.stdout);
        assert.ok(pw, r.stdout);
        w.teamEnv = { PGPASSWORD: pw[1]! };
      } else if (filled.startsWith("export ")) {
        // The password, as the README says: PGPASSWORD (from add-machine's output).
        assert.ok(w.teamEnv, "add-machine ran before the export");
        for (const a of filled.slice("export ".length).matchAll(/(\w+)=('([^']*)'|\S+)/g)) {
          w.teamEnv[a[1]!] = a[3] ?? a[2]!;
        }
        assert.ok(w.teamEnv.INTENDANT_TEAM_URL && w.teamEnv.INTENDANT_MACHINE, filled);
      } else if (filled === "intendant serve") {
        const r = await daemon(w, filled, { env: w.teamEnv });
        assert.match(r.stderr, /^team: publishing as machine laptop-a to postgres:\/\//m);
      } else {
        for (const part of filled.split("; ")) {
          const r = ok(await sh(w, part, { env: w.teamEnv }), part);
          if (part.startsWith("intendant team status")) assert.match(r.stdout, /laptop-a/);
        }
      }
    },
  },
  {
    match: /^deno task (run|ctl) /,
    async run(w, line) {
      // `[optional flags]` are left out: the line without them is a valid command.
      const filled = line.replace(/\s*\[[^\]]*\]/g, "");
      if (/^deno task ctl (answer|steer) SESSION /.test(filled)) {
        const q = filled.includes(" answer ") ? "Which branch?" : "Anything else?";
        const s = await waitingSession(w, q);
        const r = ok(await sh(w, filled.replace("SESSION", s.id)), line);
        assert.match(r.stdout, filled.includes(" answer ") ? /^answered question / : /queued/);
        return;
      }
      if (/^deno task ctl rollback SESSION /.test(filled)) {
        // On the session the answer/steer lines drove, once it has finished.
        assert.ok(w.waiting, "ctl answer ran before ctl rollback");
        await waitingSession(w, "Anything else?");
        ok(await sh(w, `deno task ctl answer ${w.waiting.id} "no"`), "answer the last question");
        const ran = await w.waiting.run;
        assert.equal(ran.code, 0, ran.stderr);
        const r = ok(await sh(w, filled.replace("SESSION", w.waiting.id)), line);
        assert.match(r.stdout, /^rolled back to seq \d+/m);
        return;
      }
      const id = w.firstSession ?? "";
      const r = ok(await sh(w, filled.replace(/\b(ID_OR_PREFIX|ID)\b/, id)), line);
      const got = sessionId(r);
      if (/--resume|--continue/.test(filled)) assert.equal(got, id, `${line} continues ${id}`);
      else if (/--parent/.test(filled)) assert.notEqual(got, id);
      else w.firstSession ??= got;
    },
  },
  {
    // The single file from an empty directory, relaunched under its profile.
    match: /^cd \/anywhere && deno run (.+) \/path\/to\/intendant\.js serve --locked$/,
    async run(w, line) {
      assert.ok(w.done.has("build"), "deno task build ran before");
      const anywhere = join(w.root, "anywhere");
      Deno.mkdirSync(anywhere, { recursive: true });
      const filled = line.replace("/anywhere", anywhere)
        .replace("/path/to/intendant.js", join(w.clone, "dist", "intendant.js"));
      const r = await daemon(w, filled);
      assert.match(r.stdout, /^Intendant is serving http:\/\/127\.0\.0\.1:/m);
    },
  },
  {
    // The manual-flags example: the profile's flags typed by hand, from the directory
    // holding intendant.js; $HOME expands to the hermetic home, 8765 becomes a free port.
    match:
      /^deno run --no-prompt --allow-net=127\.0\.0\.1:8765,unix:.* intendant\.js serve --port 8765$/,
    async run(w, line) {
      assert.ok(w.done.has("build"), "deno task build ran before");
      // The flags are the profile's for the default homes and port, as lib/permissions.ts
      // computes them: a README that drifts from the profile fails here, not only if it breaks.
      const cfg = resolveConfig({ HOME: "/HOME" }, { cwd: "/" });
      const flags = profileFlags(serveProfile(cfg)).join(" ").replaceAll("/HOME/", "$HOME/");
      assert.equal(line, `deno run ${flags} intendant.js serve --port 8765`);
      const dir = join(w.root, "manual");
      Deno.mkdirSync(dir, { recursive: true });
      Deno.copyFileSync(join(w.clone, "dist", "intendant.js"), join(dir, "intendant.js"));
      const port = freePort();
      const r = await daemon(w, line.replaceAll("8765", String(port)), { cwd: dir, port });
      assert.doesNotMatch(r.stderr, /Requires \w+ access|NotCapable/);
    },
  },
];

/** Copies the checkout's files (tracked and new, not ignored) into `dest`. */
async function cloneCheckout(dest: string): Promise<void> {
  const ls = await new Deno.Command("git", {
    args: ["ls-files", "-co", "--exclude-standard", "-z"],
    cwd: REPO_ROOT,
    stdout: "piped",
  }).output();
  assert.ok(ls.success, "git ls-files");
  for (const rel of dec.decode(ls.stdout).split("\0").filter(Boolean)) {
    if (rel.startsWith("tools/")) continue;
    const from = join(REPO_ROOT, rel);
    let st: Deno.FileInfo;
    try {
      st = Deno.lstatSync(from);
    } catch (err) {
      // Listed but deleted in the working tree.
      if (err instanceof Deno.errors.NotFound) continue;
      throw err;
    }
    if (!st.isFile) continue;
    const to = join(dest, rel);
    await Deno.mkdir(join(to, ".."), { recursive: true });
    await Deno.copyFile(from, to);
  }
}

/** tools/deno's bin directory when present, else a directory whose only deno is this one. */
function denoBinDir(root: string): string {
  const tools = join(REPO_ROOT, "tools", "deno", "node_modules", ".bin");
  try {
    if (Deno.statSync(join(tools, "deno")).isFile) return tools;
  } catch (err) {
    if (!(err instanceof Deno.errors.NotFound)) throw err;
  }
  const dir = join(root, "deno-bin");
  Deno.mkdirSync(dir);
  Deno.symlinkSync(DENO, join(dir, "deno"));
  return dir;
}

Deno.test("README: the extraction sees the blocks, the inline examples and the Commands table", () => {
  const cmds = readmeShellCommands(README);
  assert.ok(cmds.includes("npx -y deno@2.9.6 task start"), cmds.join("\n"));
  assert.ok(cmds.includes("npx -y deno@2.9.6 task test"));
  assert.ok(cmds.includes("deno task install"));
  assert.ok(cmds.some((c) => c.startsWith("deno run --no-prompt --allow-net=")), "manual flags");
  for (const c of INLINE) assert.ok(README.includes(`\`${c}\``), `inline \`${c}\``);
  const names = tableCommands(README);
  for (const n of ["serve", "search", "sessions", "index", "team", "mcp", "run", "ctl", "url"]) {
    assert.ok(names.includes(n), `${n} in ${names.join(",")}`);
  }
  // The bare PATH really has no deno on it.
  for (const dir of BARE_PATH.split(":")) {
    assert.throws(() => Deno.statSync(join(dir, "deno")), Deno.errors.NotFound);
  }
});

Deno.test({
  name: "README: every command it shows runs as printed and does what it says",
  // The team cluster's unload hook and the spawned daemons outlive single steps.
  sanitizeResources: false,
  sanitizeOps: false,
  fn: () =>
    withTempDir(async (tmp) => {
      const root = Deno.realPathSync(tmp);
      const clone = join(root, "clone");
      const home = join(root, "home");
      await cloneCheckout(clone);
      Deno.mkdirSync(join(root, "tmp"), { recursive: true });
      // One Codex session (with "café" in it) where the tool keeps them by default.
      await buildCodexFixture(join(home, ".codex"));
      const w: World = {
        root,
        clone,
        home,
        denoPath: denoBinDir(root),
        env: {
          HOME: home,
          TMPDIR: join(root, "tmp"),
          DENO_DIR: await denoDir(),
          NO_COLOR: "1",
          DENO_NO_UPDATE_CHECK: "1",
          DENO_NO_PROMPT: "1",
        },
        done: new Set(),
      };
      try {
        const missing: string[] = [];
        for (const line of readmeShellCommands(README)) {
          const r = RUNNERS.map((x) => ({ x, m: line.match(x.match) })).find((y) => y.m);
          if (!r) {
            missing.push(line);
            continue;
          }
          await r.x.run(w, line, r.m!);
        }
        assert.deepEqual(missing, [], "README commands no runner here knows how to check");

        // Inline: `deno task search café` finds the Codex session's café (either spelling),
        // from the index the first screen's daemon built.
        assert.ok(w.done.has("start"), "deno task start ran first");
        const found = ok(await sh(w, "deno task search café"), "deno task search café");
        assert.match(found.stdout, /codex/);
        assert.match(found.stdout.normalize("NFC"), /café/);

        // Every command of the table takes --help, through the installed command.
        for (const name of tableCommands(README)) {
          const r = ok(await sh(w, `intendant ${name} --help`), `intendant ${name} --help`);
          assert.match(r.stdout, new RegExp(`^usage: intendant ${name}\\b`), name);
        }
        ok(await sh(w, "intendant --help"), "intendant --help");
      } finally {
        await w.pg?.stop();
        if (w.waiting) await w.waiting.run.catch(() => {});
      }
    }),
});
