/**
 * The single file under the locked-down profile, audited (issue 8): dist/intendant.js is
 * built with `deno bundle`, copied alone into an empty directory, and run there with
 * exactly the profile flags (lib/permissions.ts) and DENO_AUDIT_PERMISSIONS. serve +
 * index + search + a headless run all work, and every audited access stays inside the
 * hermetic temp root (reads, writes), on 127.0.0.1 (net), among the documented variables
 * (env), and among sh/setsid for the runner only.
 * And the session detail's tool calls under the real locked daemon (issue 25 item 3):
 * `serve --locked` in a hermetic home holding a session of Gemini CLI, Qwen Code, Copilot
 * CLI, Cursor CLI and Factory Droid at their default homes (the profile grants only their
 * transcript roots) answers each session's detail with its tool calls, and `mcp --locked`
 * read_session include_tool_calls=true prints them; OpenCode and Goose say why they have
 * none, in the API's `activity` and in read_session's text.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { ENV_VARS_READ, resolveConfig } from "../lib/config.ts";
import { profileFlags, runProfile, serveProfile } from "../lib/permissions.ts";
import { isInside } from "../lib/durable/mod.ts";
import { writeNativeSession } from "./helpers/native_corpus.ts";
import { DENO, hermeticEnv, REPO_ROOT, withTempDir } from "./helpers/temp.ts";
import { waitFor } from "./helpers/cli.ts";
import { denoDir } from "./helpers/deno_dir.ts";
import { callTool, connectMcp } from "./helpers/mcp_client.ts";
import { ALL_FIXTURES } from "./fixtures/all.ts";
import type { AnyFixtureHome } from "./fixtures/types.ts";

interface Audit {
  permission: string;
  value: string | null;
}

function readAudit(path: string): Audit[] {
  try {
    return Deno.readTextFileSync(path).trim().split("\n").filter(Boolean).map((l) => JSON.parse(l));
  } catch {
    return [];
  }
}

Deno.test("dist/intendant.js runs from an empty directory under the audited profile: serve, index, search, run", () =>
  withTempDir(async (root) => {
    const realRoot = Deno.realPathSync(root);
    const built = await new Deno.Command(DENO, {
      args: [
        "bundle",
        "--platform=deno",
        "-o",
        join(realRoot, "dist", "intendant.js"),
        join(REPO_ROOT, "main.ts"),
      ],
      cwd: REPO_ROOT,
      stdout: "piped",
      stderr: "piped",
    }).output();
    assert.equal(built.code, 0, new TextDecoder().decode(built.stderr));
    const empty = join(realRoot, "empty");
    Deno.mkdirSync(empty);
    Deno.copyFileSync(join(realRoot, "dist", "intendant.js"), join(empty, "intendant.js"));
    const env: Record<string, string> = { ...hermeticEnv(realRoot), INTENDANT_PORT: "0" };
    Deno.mkdirSync(env.TMPDIR!, { recursive: true });
    await writeNativeSession(join(env.INTENDANT_HOME!, "logs"), {
      turns: 2,
      task: "Audit the permission profile",
    });
    const cfg = resolveConfig(env, { cwd: empty });
    const audit = join(realRoot, "audit.jsonl");
    const childEnv = {
      PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin",
      ...env,
      DENO_AUDIT_PERMISSIONS: audit,
      NO_COLOR: "1",
      DENO_NO_UPDATE_CHECK: "1",
    };
    const run = (flags: string[], args: string[]) =>
      new Deno.Command(DENO, {
        args: ["run", ...flags, "intendant.js", ...args],
        cwd: empty,
        clearEnv: true,
        env: childEnv,
        stdout: "piped",
        stderr: "piped",
      });

    // serve (no run permission at all)
    const serveFlags = profileFlags(serveProfile(cfg));
    assert.ok(
      !serveFlags.some((f) =>
        f.startsWith("--allow-run") || f === "-A" || f.startsWith("--allow-all") ||
        f.startsWith("--allow-ffi")
      ),
    );
    const daemon = run(serveFlags, ["serve"]).spawn();
    await waitFor(
      () => {
        try {
          return Deno.statSync(cfg.daemonJsonPath).isFile;
        } catch {
          return false;
        }
      },
      30_000,
      "daemon.json",
    );
    const info = JSON.parse(Deno.readTextFileSync(cfg.daemonJsonPath));
    const headers = { authorization: `Bearer ${info.token}` };
    await waitFor(
      async () =>
        (await (await fetch(`http://127.0.0.1:${info.port}/api/coverage`, { headers })).json())
          .state === "ready",
      30_000,
      "first sweep",
    );
    const found = await (await fetch(
      `http://127.0.0.1:${info.port}/api/sessions/message-search?q=permission%20profile`,
      { headers },
    )).json();
    assert.equal(found.groups.length, 1);
    // The dashboard page, like the API, needs the token (a cookie, or here the bearer).
    const page = await fetch(`http://127.0.0.1:${info.port}/`, { headers });
    assert.match(await page.text(), /<script type="module" src="\/app\.js">/);
    daemon.kill("SIGTERM");
    const served = await daemon.output();
    assert.equal(served.code, 0, new TextDecoder().decode(served.stderr));

    // index + search (serve profile), headless run (runner profile)
    const idx = await run(serveFlags, ["index", "--json"]).output();
    assert.equal(idx.code, 0, new TextDecoder().decode(idx.stderr));
    const search = await run(serveFlags, ["search", "permission", "--json"]).output();
    assert.equal(search.code, 0, new TextDecoder().decode(search.stderr));
    assert.equal(JSON.parse(new TextDecoder().decode(search.stdout)).groups.length, 1);
    const runFlags = profileFlags(runProfile(cfg, empty));
    const headless = await run(runFlags, ["run", "Say hello from the sandbox"]).output();
    assert.equal(headless.code, 0, new TextDecoder().decode(headless.stderr));

    // Every audited access stays inside the profile.
    const entries = readAudit(audit);
    assert.ok(entries.length > 20, "the audit log recorded accesses");
    const outside = entries.filter((e) => {
      if (e.permission === "read" || e.permission === "write") {
        return !(e.value && isInside(e.value, realRoot));
      }
      if (e.permission === "net") return !(e.value ?? "").startsWith("127.0.0.1");
      if (e.permission === "env") return !ENV_VARS_READ.includes(e.value ?? "");
      if (e.permission === "run") return !["sh", "setsid"].includes(e.value ?? "");
      return true;
    });
    const kinds = [...new Set(entries.map((e) => e.permission))].sort();
    console.log(
      `audited accesses: ${entries.length} (${
        kinds.join(", ")
      }), outside the profile: ${outside.length}`,
    );
    assert.deepEqual(outside, []);
  }));

function existsFile(path: string): boolean {
  try {
    return Deno.statSync(path).isFile;
  } catch (err) {
    if (err instanceof Deno.errors.NotFound) return false;
    throw err;
  }
}

/** The five sources whose home rule grants only transcript roots, and the two DB sources. */
const ROOTED = ["gemini", "qwen", "copilot", "cursor", "droid"] as const;
const DATABASE = ["opencode", "goose"] as const;

interface DetailJson {
  entries: { kind: string; tools?: { name: string }[] }[];
  activity?: { state: string; reason?: string };
}

Deno.test("serve --locked shows the tool calls of Gemini, Qwen, Copilot, Cursor and Droid sessions; OpenCode and Goose say why not", () =>
  withTempDir(async (root) => {
    const home = join(root, "home");
    const gooseRoot = join(root, "goose-root");
    const homes: Record<string, AnyFixtureHome> = {};
    for (const source of [...ROOTED, ...DATABASE]) {
      const fx = ALL_FIXTURES.find((f) => f.source === source)!;
      homes[source] = await fx.build(source === "goose" ? gooseRoot : home);
    }
    const env: Record<string, string> = {
      ...hermeticEnv(root, { INTENDANT_MESSAGE_SEARCH_DAEMON_HOME_ONLY: "0" }),
      GOOSE_PATH_ROOT: gooseRoot,
      INTENDANT_PORT: "0",
      PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin",
      DENO_DIR: await denoDir(),
      NO_COLOR: "1",
      DENO_NO_UPDATE_CHECK: "1",
    };
    Deno.mkdirSync(env.TMPDIR!, { recursive: true });
    const cfg = resolveConfig(env, { cwd: root });
    const daemon = new Deno.Command(DENO, {
      args: ["run", "-P=launch", "main.ts", "serve", "--locked"],
      cwd: REPO_ROOT,
      clearEnv: true,
      env,
      stdout: "null",
      stderr: "piped",
    }).spawn();
    const stderr = new Response(daemon.stderr).text();
    try {
      await waitFor(() => existsFile(cfg.daemonJsonPath), 60_000, "daemon.json");
      const info = JSON.parse(Deno.readTextFileSync(cfg.daemonJsonPath));
      const headers = { authorization: `Bearer ${info.token}` };
      const api = async (path: string) => {
        const r = await fetch(`http://127.0.0.1:${info.port}${path}`, { headers });
        assert.equal(r.status, 200, path);
        return await r.json();
      };
      await waitFor(async () => (await api("/api/coverage")).state === "ready", 60_000, "sweep");
      const detail = (key: string): Promise<DetailJson> =>
        api(`/api/session/${encodeURIComponent(key)}?limit=1000`);
      const toolNames = (d: DetailJson) =>
        d.entries.flatMap((e) => e.tools ?? []).map((t) => t.name);

      // Each of the five: no session's activity is unavailable, and some session shows calls.
      const withTools: Record<string, string> = {};
      for (const source of ROOTED) {
        for (const key of Object.keys(homes[source]!.expected)) {
          const d = await detail(key);
          assert.notEqual(d.activity?.state, "unavailable", `${key}: ${d.activity?.reason}`);
          if (toolNames(d).length > 0 && !withTools[source]) withTools[source] = key;
        }
        assert.ok(withTools[source], `${source}: no session shows a tool call under --locked`);
      }
      // OpenCode and Goose: no tool calls, and the API says why.
      for (const source of DATABASE) {
        const d = await detail(homes[source]!.appendTarget.key);
        assert.equal(d.activity?.state, "unavailable", source);
        assert.match(d.activity?.reason ?? "", /tool calls in database rows/, source);
      }

      // MCP under its own locked profile: the calls are printed; a DB source says why not.
      const { client, stderr: mcpErr } = await connectMcp(env);
      try {
        const gemini = await callTool(client, "read_session", {
          session_key: withTools.gemini,
          include_tool_calls: true,
          limit: 500,
        });
        assert.equal(gemini.isError, false, gemini.text);
        assert.match(gemini.text, /^ {2}tool \S+ \(/m, `${gemini.text}\n${mcpErr()}`);
        assert.doesNotMatch(gemini.text, /tool calls not shown/);
        const oc = await callTool(client, "read_session", {
          session_key: homes.opencode!.appendTarget.key,
          include_tool_calls: true,
        });
        assert.match(
          oc.text,
          /^\(tool calls not shown: This source keeps its tool calls in database rows, .*\)$/m,
          oc.text,
        );
      } finally {
        await client.close();
      }
    } finally {
      daemon.kill("SIGTERM");
      const status = await daemon.status;
      assert.equal(status.code, 0, await stderr);
    }
    assert.doesNotMatch(await stderr, /NotCapable|Requires \w+ access/);
  }));
