/**
 * `intendant mcp` end to end, with a real MCP client: the official SDK's Client and
 * StdioClientTransport spawn the real program (`deno run -P=launch main.ts mcp --locked`,
 * so the server runs under its locked mcp profile) on a hermetic home holding a session of
 * every source, each with a planted word and a generated (never real) OpenAI-shaped key.
 * Covered: initialize, tools/list with schemas, every tool's happy path, superseded
 * framing, cursor paging across the output cap, bad arguments (isError results, the
 * server keeps serving), warm answers from a daemon and the fallback to the store when
 * that daemon goes away mid-session, and `--print-config` for each client.
 * On the code before issue 18 there is no `mcp` command: the client's connect fails.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { ALL_FIXTURES, buildAllFixtures } from "./fixtures/all.ts";
import { MAIN, runIntendant } from "./helpers/cli.ts";
import { DENO, hermeticEnv, REPO_ROOT, withTempDir } from "./helpers/temp.ts";
import { resolveConfig } from "../lib/config.ts";
import { mcpProfile, STATIC_PROFILES } from "../lib/permissions.ts";
import { lockedCommand, RUNTIME_CONFIG } from "../lib/relaunch.ts";
import { isNpxCachePath, serverCommand } from "../lib/mcp/mod.ts";
import { plantedKeys } from "./helpers/secret_keys.ts";
import { callTool as call, connectMcp, type ToolText } from "./helpers/mcp_client.ts";
import { plantUserMessage as plant } from "./fixtures/plant.ts";

const WORD = "quixotically";
const MAX_BYTES = 6_000;

/** A random body in [A-Za-z0-9] that has every class (a real key's shape, never a real key). */
function keyBody(n: number): string {
  const cs = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
  const r = crypto.getRandomValues(new Uint8Array(n - 3));
  return "aQ7" + [...r].map((b) => cs[b % cs.length]).join("");
}

function freePort(): number {
  const l = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (l.addr as Deno.NetAddr).port;
  l.close();
  return port;
}

/** The server under test, with this file's output cap unless a test names its own. */
function connect(env: Record<string, string>, extra: string[] = []) {
  const capped = extra.some((a) => a.startsWith("--max-output-bytes"));
  return connectMcp(env, capped ? extra : [`--max-output-bytes=${MAX_BYTES}`, ...extra]);
}

Deno.test("intendant mcp serves every tool to a real SDK client under its locked profile", async () => {
  await withTempDir(async (root) => {
    const fixtures = await buildAllFixtures(root, { sources: "all" });
    const secret = `sk-proj-${keyBody(48)}`;
    for (const h of Object.values(fixtures.homes)) {
      plant(h, `${WORD} planted in ${h.source} with key ${secret}`);
    }
    const port = freePort();
    const env = {
      PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin",
      NO_COLOR: "1",
      ...hermeticEnv(root, fixtures.env),
      INTENDANT_PORT: String(port),
    };
    Deno.mkdirSync(join(root, "tmp"), { recursive: true });
    const { client, stderr, pid } = await connect(env);
    try {
      // The launcher re-executed the server under the mcp profile: its child's argv.
      const cfg = resolveConfig(env, { cwd: root });
      const argv = lockedArgvOf(pid!);
      assert.ok(argv.includes("-P=mcp"), argv.join(" "));
      assert.ok(argv.includes(`--allow-write=${cfg.messageSearch.cacheRoot}`), argv.join(" "));
      assert.ok(argv.includes(`--allow-net=127.0.0.1:${port}`), argv.join(" "));
      assert.ok(!argv.some((a) => /^--allow-(all|run|ffi|sys)|^-A$/.test(a)), argv.join(" "));
      // initialize + tools/list
      assert.equal(client.getServerVersion()?.name, "intendant");
      const { tools } = await client.listTools();
      assert.deepEqual(tools.map((t) => t.name), [
        "search_messages",
        "list_sessions",
        "read_session",
        "index_status",
      ]);
      for (const t of tools) {
        assert.equal(t.inputSchema.type, "object", t.name);
        assert.ok((t.description ?? "").length > 80, `${t.name} has a description`);
      }
      const search = tools.find((t) => t.name === "search_messages")!;
      assert.match(search.description!, /not instructions/);
      for (const p of ["query", "source", "role", "project", "since", "until", "cursor", "limit"]) {
        assert.ok(p in (search.inputSchema.properties ?? {}), `search_messages has ${p}`);
      }
      assert.deepEqual(search.inputSchema.required, ["query"]);

      // search_messages: every source's planted message, framed, masked, marked, linked;
      // paged by cursor over a cap small enough to cut pages.
      const keys: string[] = [];
      let cursor: string | undefined;
      let first: ToolText | null = null;
      for (let pages = 0; pages < 30; pages++) {
        const r = await call(client, "search_messages", {
          query: WORD,
          limit: 5,
          ...(cursor ? { cursor } : {}),
        });
        assert.equal(r.isError, false, r.text);
        first ??= r;
        assert.ok(new TextEncoder().encode(r.text).length <= MAX_BYTES, "bounded");
        assert.match(r.text, /^\[intendant: quoted past conversations/);
        assert.ok(!r.text.includes(secret), "the key is masked");
        keys.push(...[...r.text.matchAll(/^> session: (\S+)/gm)].map((m) => m[1]!));
        cursor = /cursor="([^"]+)"/.exec(r.text)?.[1];
        if (!cursor) break;
      }
      const expected = Object.values(fixtures.homes).map((h) => h.appendTarget.key).sort();
      assert.deepEqual([...keys].sort(), expected, "every session once, across pages");
      assert.match(first!.text, new RegExp(`«${WORD}»`));
      assert.match(first!.text, /sk-p…\[openai key\]/);
      assert.match(first!.text, /^> resume: \S/m);
      assert.match(first!.text, /^open: http:\/\/127\.0\.0\.1:\d+\/#\/session\/\S+$/m);
      assert.match(first!.text, /answered by the local index/);

      // read_session centred on a hit's locator.
      const codexKey = fixtures.homes.codex!.appendTarget.key;
      const hitSearch = await call(client, "search_messages", {
        query: WORD,
        source: ["codex"],
      });
      const locator = /hit=(h\S+)/.exec(hitSearch.text)?.[1];
      assert.ok(locator, hitSearch.text);
      const read = await call(client, "read_session", {
        session_key: codexKey,
        locator,
        limit: 5,
      });
      assert.equal(read.isError, false, read.text);
      assert.match(
        read.text,
        /<- located hit\n> quixotically planted in codex with key sk-p…\[openai key\]/,
      );
      assert.ok(!read.text.includes(secret));
      assert.match(read.text, /^> resume: codex resume /m);
      const tools2 = await call(client, "read_session", {
        session_key: codexKey,
        include_tool_calls: true,
        limit: 200,
      });
      assert.equal(tools2.isError, false, tools2.text);
      assert.ok(new TextEncoder().encode(tools2.text).length <= MAX_BYTES);

      // Superseded framing: a rewound message is labelled, and left out by default.
      const rewound = ["gemini", "qwen", "opencode"].flatMap((s) =>
        Object.values(fixtures.homes[s]!.expected).flatMap((recs) =>
          recs.filter((x) =>
            x.superseded && !x.subagent
          ).map((x) => ({ s, text: x.text }))
        )
      )[0];
      assert.ok(rewound, "a fixture with a rewound message");
      const phrase = `"${rewound.text}"`;
      const withSup = await call(client, "search_messages", {
        query: phrase,
        source: [rewound.s],
        include_superseded: true,
      });
      assert.match(withSup.text, /SUPERSEDED: this message was rewound\/abandoned/);
      const without = await call(client, "search_messages", { query: phrase, source: [rewound.s] });
      assert.doesNotMatch(without.text, /SUPERSEDED/);

      // list_sessions, filtered.
      const listed = await call(client, "list_sessions", { source: ["codex"] });
      assert.equal(listed.isError, false, listed.text);
      const listedKeys = [...listed.text.matchAll(/^ {2}> session: (\S+)/gm)].map((m) => m[1]!);
      assert.ok(listedKeys.length >= 1 && listedKeys.every((k) => k.startsWith("codex:")));
      // Paged by offset across the output cap: every session listed.
      const allKeys: string[] = [];
      for (let offset: number | undefined = 0, n = 0; offset !== undefined && n < 40; n++) {
        const r = await call(client, "list_sessions", { limit: 200, offset });
        assert.equal(r.isError, false, r.text);
        assert.ok(new TextEncoder().encode(r.text).length <= MAX_BYTES, "bounded");
        allKeys.push(...[...r.text.matchAll(/^ {2}> session: (\S+)/gm)].map((m) => m[1]!));
        const next = /offset=(\d+)/.exec(r.text)?.[1];
        offset = next === undefined ? undefined : Number(next);
      }
      assert.equal(new Set(allKeys).size, allKeys.length, "no session twice");
      for (const k of expected) assert.ok(allKeys.includes(k), `${k} listed`);

      // index_status: coverage per source.
      const status = await call(client, "index_status");
      assert.equal(status.isError, false, status.text);
      for (const fx of ALL_FIXTURES) {
        assert.match(status.text, new RegExp(`^- ${fx.source}: [1-9]\\d* session`, "m"));
      }

      // Bad arguments: clear isError results, and the server keeps serving.
      const bad: [string, Record<string, unknown>, RegExp][] = [
        ["search_messages", { query: WORD, limit: 0 }, /limit/i],
        ["search_messages", {}, /query/i],
        ["search_messages", { query: WORD, cursor: "not-a-cursor" }, /cursor/i],
        ["search_messages", { query: WORD, since: "last tuesday-ish" }, /since/],
        ["search_messages", { query: WORD, source: ["nope"] }, /source/],
        ["read_session", { session_key: "codex:does-not-exist" }, /No session/],
        ["read_session", { session_key: codexKey, locator: "%%%" }, /locate/i],
      ];
      for (const [name, args, re] of bad) {
        const r = await call(client, name, args);
        assert.equal(r.isError, true, `${name} ${JSON.stringify(args)}: ${r.text}`);
        assert.match(r.text, re);
      }
      const unknown = await call(client, "no_such_tool");
      assert.equal(unknown.isError, true);
      assert.match(unknown.text, /no_such_tool/);
      assert.equal((await call(client, "index_status")).isError, false);

      // Warm: a daemon of this state root answers; when it goes away, the store does.
      const daemon = new Deno.Command(DENO, {
        args: ["run", "-A", "--quiet", MAIN, "serve"],
        env,
        clearEnv: true,
        stdout: "null",
        stderr: "null",
      }).spawn();
      try {
        const daemonJson = join(root, "fx", "intendant", "daemon.json");
        for (let i = 0; i < 300 && !(await exists(daemonJson)); i++) await sleep(100);
        assert.ok(await exists(daemonJson), "the daemon started");
        const warm = await call(client, "search_messages", { query: WORD, limit: 2 });
        assert.equal(warm.isError, false, warm.text);
        assert.match(warm.text, /answered by the running Intendant daemon/);
        assert.ok(!warm.text.includes(secret));
        const warmStatus = await call(client, "index_status");
        assert.match(warmStatus.text, /answered by the running Intendant daemon/);
      } finally {
        daemon.kill("SIGTERM");
        await daemon.status;
      }
      const cold = await call(client, "search_messages", { query: WORD, limit: 2 });
      assert.equal(cold.isError, false, cold.text);
      assert.match(cold.text, /answered by the local index/);
      assert.match(cold.text, /^> session: /m);
    } catch (err) {
      console.error("server stderr:\n" + stderr());
      throw err;
    } finally {
      await client.close();
    }
  });
});

/** argv of the one child of `pid` (Linux /proc): the locked server the launcher spawned. */
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

async function exists(p: string): Promise<boolean> {
  try {
    await Deno.stat(p);
    return true;
  } catch {
    return false;
  }
}

function sleep(ms: number) {
  return new Promise((r) => setTimeout(r, ms));
}

Deno.test("intendant mcp --print-config prints a valid snippet for each client", async () => {
  await withTempDir(async (root) => {
    // Every agent-home variable that is set travels with the snippet (issue 25), made
    // absolute: a client starts the server with its own cwd and environment.
    const env = {
      INTENDANT_HOME: join(root, "state with space"),
      XDG_DATA_HOME: "rel/data",
      GEMINI_CLI_HOME: "~/gem",
    };
    const home = hermeticEnv(root).HOME!;
    const want: Record<string, string> = {
      INTENDANT_HOME: env.INTENDANT_HOME,
      CODEX_HOME: hermeticEnv(root).CODEX_HOME!,
      CLAUDE_CONFIG_DIR: hermeticEnv(root).CLAUDE_CONFIG_DIR!,
      KIMI_CODE_HOME: hermeticEnv(root).KIMI_CODE_HOME!,
      PI_CODING_AGENT_DIR: hermeticEnv(root).PI_CODING_AGENT_DIR!,
      XDG_DATA_HOME: join(root, "rel", "data"),
      GEMINI_CLI_HOME: join(home, "gem"),
    };
    const parsed: Record<string, { command: string; args: string[]; env: Record<string, string> }> =
      {};
    for (const c of ["claude", "codex", "gemini", "cursor"]) {
      const r = await runIntendant(root, ["mcp", "--print-config", c], { env });
      assert.equal(r.code, 0, r.stderr);
      if (c === "gemini" || c === "cursor") {
        const j = JSON.parse(r.stdout);
        parsed[c] = j.mcpServers.intendant;
        assert.equal(j.mcpServers.intendant.env.INTENDANT_HOME, env.INTENDANT_HOME);
      } else if (c === "codex") {
        parsed[c] = parseCodexToml(r.stdout);
      } else {
        const m = /^claude mcp add --scope user ((?:-e (?:'[^']+'|\S+) )+)intendant -- (.+)\n$/
          .exec(r.stdout);
        assert.ok(m, r.stdout);
        const vars = [...m[1]!.matchAll(/-e (?:'([^=]+)=([^']+)'|([^=' ]+)=(\S+))/g)]
          .map((x) => [x[1] ?? x[3], x[2] ?? x[4]]);
        assert.ok(vars.some(([k, v]) => k === "INTENDANT_HOME" && v === env.INTENDANT_HOME));
        const words = m[2]!.split(" ");
        parsed[c] = { command: words[0]!, args: words.slice(1), env: Object.fromEntries(vars) };
      }
    }
    // A Deno in npx's cache (CI's, and the README's route) is named through npx.
    const viaNpx = isNpxCachePath(DENO);
    for (const [c, p] of Object.entries(parsed)) {
      if (viaNpx) {
        assert.equal(p.command, "npx", c);
        assert.deepEqual(p.args.slice(0, 2), ["-y", `deno@${Deno.version.deno}`], c);
        assert.ok(!p.args.some((a) => a.includes("_npx")), c);
      } else assert.equal(p.command, DENO, c);
      assert.deepEqual(p.args.slice(-2), ["mcp", "--locked"], c);
      assert.ok(p.args.includes(MAIN), c);
      assert.ok(p.args.includes(`--config=${join(REPO_ROOT, RUNTIME_CONFIG)}`), c);
      assert.deepEqual(p.env, want, c);
    }
    const bad = await runIntendant(root, ["mcp", "--print-config", "emacs"], { env });
    assert.equal(bad.code, 2);
    assert.match(
      bad.stderr,
      /Invalid --print-config "emacs": expected claude, codex, gemini, cursor/,
    );
  });
});

Deno.test("--print-config never names npx's cache: an npx Deno is named through npx, an installed command wins", () => {
  const base = {
    mainModule: "file:///src/intendant/main.ts",
    hasConfig: true,
    denoVersion: "2.9.6",
    installed: null,
  };
  const npx = serverCommand({
    ...base,
    denoPath: "/home/u/.npm/_npx/6a9f/node_modules/deno/deno",
  }, { INTENDANT_HOME: "/s" });
  assert.equal(npx.command, "npx");
  assert.deepEqual(npx.args.slice(0, 4), ["-y", "deno@2.9.6", "run", "--quiet"]);
  assert.ok(!npx.args.some((a) => a.includes("_npx")), npx.args.join(" "));
  assert.deepEqual(npx.args.slice(-3), ["/src/intendant/main.ts", "mcp", "--locked"]);
  assert.deepEqual(npx.env, { INTENDANT_HOME: "/s" });
  const shim = serverCommand({
    ...base,
    denoPath: "/home/u/.npm/_npx/6a9f/node_modules/deno/deno",
    installed: "/home/u/.deno/bin/intendant",
  });
  assert.deepEqual([shim.command, ...shim.args], [
    "/home/u/.deno/bin/intendant",
    "mcp",
    "--locked",
  ]);
  const plain = serverCommand({ ...base, denoPath: "/usr/local/bin/deno" });
  assert.equal(plain.command, "/usr/local/bin/deno");
});

/** The codex snippet's table, parsed strictly (the subset of TOML it may use). */
function parseCodexToml(
  text: string,
): { command: string; args: string[]; env: Record<string, string> } {
  const lines = text.trim().split("\n").filter((l) => !l.startsWith("#"));
  assert.equal(lines[0], "[mcp_servers.intendant]");
  const kv = Object.fromEntries(
    lines.slice(1).map((l) => {
      const m = /^([a-z_]+) = (.+)$/.exec(l);
      assert.ok(m, `a key = value line: ${l}`);
      return [m[1]!, m[2]!];
    }),
  );
  // TOML basic strings and arrays of them are JSON-compatible here; inline tables are not.
  const inline = kv.env ? /^\{ (.*) \}$/.exec(kv.env) : null;
  if (kv.env) assert.ok(inline, kv.env);
  const env: Record<string, string> = {};
  for (const m of (inline?.[1] ?? "").matchAll(/([A-Z_]+) = ("(?:[^"\\]|\\.)*")(?:, |$)/g)) {
    env[m[1]!] = JSON.parse(m[2]!);
  }
  return { command: JSON.parse(kv.command!), args: JSON.parse(kv.args!), env };
}

Deno.test("the mcp profile: loopback to its own port, reads what serve reads, writes only the index", () => {
  const cfg = resolveConfig({ HOME: "/h", INTENDANT_PORT: "9123" }, { cwd: "/w" });
  const p = mcpProfile(cfg);
  assert.deepEqual(p.net, ["127.0.0.1:9123"]);
  assert.deepEqual(p.write, ["/h/.intendant/cache/message_search"]);
  assert.ok(p.read.includes("/h/.intendant") && p.read.includes("/h/.codex"));
  assert.deepEqual(p.run, []);
  const config = JSON.parse(Deno.readTextFileSync(join(REPO_ROOT, "deno.json")));
  assert.deepEqual(config.permissions.mcp.env, [...STATIC_PROFILES.mcp.env]);
  for (const k of ["run", "ffi", "sys", "all", "write", "net", "import"]) {
    assert.equal(config.permissions.mcp[k], undefined, `the mcp set grants no ${k}`);
  }
  const argv = lockedCommand({
    cfg,
    args: ["mcp"],
    mainModule: new URL("../main.ts", import.meta.url).href,
    denoPath: "/usr/bin/deno",
    os: "linux",
    projectRoot: "/w",
  });
  assert.ok(argv.includes("-P=mcp"));
  assert.ok(!argv.some((a) => a.startsWith("--v8-flags")), "the daemon's V8 flags are serve's");
});

Deno.test("every kind of key the masker knows is masked in what intendant mcp returns", async () => {
  await withTempDir(async (root) => {
    // The original five sources; the keys go into one long Claude Code message, each on a
    // line of its own after its marker, so every snippet window also has neighbours' keys
    // near its edges (a window must never show half of one).
    const fixtures = await buildAllFixtures(root);
    const home = fixtures.homes["claude-code"]!;
    const keys = plantedKeys();
    plant(home, keys.map((k, i) => `marker${i}x please keep ${k.line} for later`).join("\n"));
    const env = {
      PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin",
      NO_COLOR: "1",
      ...hermeticEnv(root, fixtures.env),
      INTENDANT_PORT: String(freePort()),
    };
    Deno.mkdirSync(join(root, "tmp"), { recursive: true });
    const { client } = await connect(env, ["--max-output-bytes=200000"]);
    const leaks = (text: string, secret: string) => {
      const out: string[] = [];
      for (let i = 0; i + 12 <= secret.length; i += 6) {
        if (text.includes(secret.slice(i, i + 12))) out.push(secret.slice(i, i + 12));
      }
      return out;
    };
    try {
      // Each key through a search snippet: its own message is the hit.
      for (const [i, k] of keys.entries()) {
        // Best match (compact snippets, cut after masking): no piece of the key either.
        const best = await call(client, "search_messages", { query: `marker${i}x` });
        assert.equal(best.isError, false, best.text);
        assert.deepEqual(leaks(best.text, k.secret), [], `${k.kind} leaked in a compact snippet`);
        const r = await call(client, "search_messages", { query: `marker${i}x`, sort: "newest" });
        assert.equal(r.isError, false, r.text);
        assert.match(r.text, new RegExp(`«marker${i}x»`), `${k.kind}: the hit is shown`);
        assert.deepEqual(leaks(r.text, k.secret), [], `${k.kind} leaked in a snippet`);
        // A key that fits beside its marker is shown (masked); a longer one (a private-key
        // block) is left out of the window rather than cut.
        if (k.line.length < 160) {
          assert.ok(r.text.includes(`[${k.kind}]`), `${k.kind} is named in "${r.text}"`);
        }
      }
      // Every key through read_session: the whole session, every message in full.
      const r = await call(client, "read_session", {
        session_key: home.appendTarget.key,
        limit: 500,
      });
      assert.equal(r.isError, false, r.text);
      for (const k of keys) {
        assert.ok(r.text.includes(`marker${keys.indexOf(k)}x`), `${k.kind}: message shown`);
        assert.deepEqual(leaks(r.text, k.secret), [], `${k.kind} leaked in read_session`);
      }
    } finally {
      await client.close();
    }
  });
});

Deno.test("search_messages: one value where a list is allowed, totals, wording that says what to do, one CJK character", async () => {
  await withTempDir(async (root) => {
    const fixtures = await buildAllFixtures(root, { sources: "all" });
    for (const h of Object.values(fixtures.homes)) {
      plant(h, `${WORD} planted in ${h.source} near the 龍 gate`);
    }
    const env = {
      PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin",
      NO_COLOR: "1",
      ...hermeticEnv(root, fixtures.env),
      INTENDANT_PORT: String(freePort()),
      INTENDANT_MESSAGE_SEARCH_DAEMON_HOME_ONLY: "0",
    };
    Deno.mkdirSync(join(root, "tmp"), { recursive: true });
    const { client } = await connect(env, ["--max-output-bytes=200000"]);
    try {
      // `source: "codex"` is the list ["codex"]: only Codex sessions, no validation error.
      const one = await call(client, "search_messages", { query: WORD, source: "codex" });
      assert.equal(one.isError, false, one.text);
      assert.match(one.text, /Session \(codex, /);
      assert.doesNotMatch(one.text, /Session \((?!codex,)[a-z-]+/);
      const listed = await call(client, "list_sessions", { source: "codex" });
      assert.equal(listed.isError, false, listed.text);
      // A page that is not the whole answer says how many match in all.
      const all = await call(client, "search_messages", { query: WORD, sort: "newest" });
      const n = Object.keys(fixtures.homes).length;
      // Exact mode: the role-filter suggestion below counts exact sessions too.
      const paged = await call(client, "search_messages", {
        query: WORD,
        limit: 2,
        sort: "newest",
      });
      assert.match(paged.text, new RegExp(`2 session\\(s\\) on this page, (\\d+) sessions match`));
      const total = Number(/(\d+) sessions match in all/.exec(paged.text)?.[1]);
      assert.ok(total >= n, `${total} ≥ ${n} planted sessions`);
      assert.match(all.text, new RegExp(`${Math.min(total, 10)} session\\(s\\) on this page`));
      // One CJK character is a query of its own.
      const dragon = await call(client, "search_messages", { query: "龍" });
      assert.equal(dragon.isError, false, dragon.text);
      assert.match(dragon.text, /«龍»/);
      // Nothing anywhere: no suggestion that would find nothing either.
      const none = await call(client, "search_messages", { query: "zzyzxnothing" });
      assert.match(none.text, /No matches in the whole index\.\n|No matches in the whole index\.$/);
      assert.doesNotMatch(none.text, /include_superseded=true/);
      // Said only by the user: the assistant-only search suggests dropping the role filter.
      const elsewhere = await call(client, "search_messages", {
        query: "龍 gate",
        role: "assistant",
        sort: "newest",
      });
      assert.match(elsewhere.text, /No matches in the whole index\./);
      assert.match(elsewhere.text, new RegExp(`dropping the role filter finds ${total} session`));
      // Refusals say what to do, in words.
      const bad: [Record<string, unknown>, RegExp][] = [
        [
          { query: WORD, limit: 0 },
          /limit.*must be a whole number from 1 to 100|must be a whole number from 1 to 100.*limit/,
        ],
        [
          { query: WORD, project: "x".repeat(501) },
          /is too long: at most 500 characters; shorten it/,
        ],
        [
          { query: WORD, source: "nope" },
          /must be one of intendant, codex, .*or a list of them at source/,
        ],
        [{ query: "" }, /is empty: give words to search for/],
      ];
      for (const [args, re] of bad) {
        const r = await call(client, "search_messages", args);
        assert.equal(r.isError, true, JSON.stringify(args));
        assert.match(r.text, re);
        assert.doesNotMatch(r.text, /Too big|Too small|expected string to have/);
      }
    } finally {
      await client.close();
    }
  });
});
