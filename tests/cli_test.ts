/**
 * CLI polish through the real program: help and version, per-command help, `serve` as
 * the default command, --json listings that parse, the documented exit codes with
 * one-line errors plus a hint, and `url SESSION` (a link that opens one session's detail,
 * the same fragment the dashboard's own links use).
 */
import assert from "node:assert/strict";
import { runIntendant, sessionOf } from "./helpers/cli.ts";
import { withTempDir } from "./helpers/temp.ts";
import { dirname, join } from "node:path";
import { buildCodexFixture } from "./fixtures/codex_fixture.ts";
import { sessionHref } from "../ui/lib/route.ts";

Deno.test("help, version and per-command help", () =>
  withTempDir(async (root) => {
    const help = await runIntendant(root, ["--help"]);
    assert.equal(help.code, 0);
    const all = [
      "serve",
      "search",
      "sessions",
      "index",
      "run",
      "ctl",
      "delete",
      "trash",
      "restore",
      "url",
      "token",
    ];
    for (const c of all) {
      assert.match(help.stdout, new RegExp(`^  ${c}\\s`, "m"));
    }
    const v = await runIntendant(root, ["--version"]);
    assert.match(v.stdout, /^intendant \d+\.\d+\.\d+\n$/);
    for (const c of all) {
      const r = await runIntendant(root, [c, "--help"]);
      assert.equal(r.code, 0, c);
      assert.match(r.stdout, new RegExp(`^usage: intendant ${c}`), c);
    }
  }));

Deno.test("serve is the default command; errors are one line plus a hint with distinct exit codes", () =>
  withTempDir(async (root) => {
    const dflt = await runIntendant(root, ["--port", "abc"]);
    assert.equal(dflt.code, 2);
    assert.match(
      dflt.stderr,
      /^intendant: Flag "--port" needs a number, got "abc"\nhint: see `intendant serve --help`\n$/,
    );
    assert.equal((await runIntendant(root, ["frobnicate"])).code, 2);
    const a = sessionOf(await runIntendant(root, ["run", "first"]));
    const b = sessionOf(await runIntendant(root, ["run", "second"]));
    const nf = await runIntendant(root, ["ctl", "steer", "zzzzzz", "x"]);
    assert.equal(nf.code, 3);
    assert.match(nf.stderr, /hint: `intendant sessions` lists what exists/);
    // Two uuids share a first character often enough; find a real common prefix.
    let p = 0;
    while (a.id[p] === b.id[p]) p++;
    if (p > 0) {
      const amb = await runIntendant(root, ["ctl", "steer", a.id.slice(0, p), "x"]);
      assert.equal(amb.code, 4);
      assert.match(amb.stderr, /ambiguous/);
    }
    const search = await runIntendant(root, ["search"]);
    assert.equal(search.code, 2);
    assert.match(search.stderr, /Missing QUERY/);
  }));

Deno.test("--json listings parse: sessions, index, search", () =>
  withTempDir(async (root) => {
    sessionOf(await runIntendant(root, ["run", "Explain the JSON listings"]));
    const idx = JSON.parse((await runIntendant(root, ["index", "--json"])).stdout);
    assert.equal(idx.coverage.sources.intendant.sessions, 1);
    const ses = JSON.parse((await runIntendant(root, ["sessions", "--json"])).stdout);
    assert.equal(ses.sessions.length, 1);
    assert.match(ses.sessions[0].resume_command, /^intendant run --resume /);
    const s = JSON.parse((await runIntendant(root, ["search", "JSON listings", "--json"])).stdout);
    assert.equal(s.groups.length, 1);
    // The task (user) and the mock's "Working on: …" echo (assistant) both match.
    assert.deepEqual(s.groups[0].hits.map((h: { role: string }) => h.role).sort(), [
      "assistant",
      "user",
    ]);
  }));

Deno.test("url SESSION prints a link to that session's detail: a key, a native id or prefix, an external id, --json; unknown and ambiguous ids fail", () =>
  withTempDir(async (root) => {
    const a = sessionOf(await runIntendant(root, ["run", "first"]));
    const b = sessionOf(await runIntendant(root, ["run", "second"]));
    // Renamed to share a's first 8 characters, so that prefix names two sessions.
    await Deno.rename(b.dir, join(dirname(b.dir), `${a.id.slice(0, 8)}-twin`));
    const codex = await buildCodexFixture(join(root, "home", ".codex"));
    const codexKey = Object.keys(codex.expected)[0]!;
    // Sweep the agent homes too (hermeticEnv sweeps only the intendant home by default).
    const idx = await runIntendant(root, ["index"], {
      env: { INTENDANT_MESSAGE_SEARCH_DAEMON_HOME_ONLY: "no" },
    });
    assert.equal(idx.code, 0, idx.stderr);
    const base = await runIntendant(root, ["url"]);
    assert.equal(base.code, 0, base.stderr);
    const plain = base.stdout.trim();
    const link = (key: string) => `${plain}${sessionHref(key)}`;
    const key = `intendant:${a.id}`;
    assert.equal(link(key), `${plain}#/session/${encodeURIComponent(key)}`);
    const cases: [string, string][] = [
      [key, key],
      [a.id, key],
      [a.id.slice(0, 12), key],
      [codexKey, codexKey],
      [codexKey.slice("codex:".length), codexKey], // the bare id `sessions` prints
    ];
    for (const [arg, want] of cases) {
      const r = await runIntendant(root, ["url", arg]);
      assert.equal(r.code, 0, `${arg}: ${r.stderr}`);
      assert.equal(r.stdout, `${link(want)}\n`, arg);
    }
    const j = await runIntendant(root, ["url", a.id.slice(0, 12), "--json"]);
    assert.equal(j.code, 0, j.stderr);
    const report = JSON.parse(j.stdout);
    assert.equal(report.url, link(key));
    assert.equal(report.session_key, key);
    assert.equal(report.running, false);
    assert.equal(typeof report.port, "number");

    const missing = await runIntendant(root, ["url", "intendant:zzzzzzzz"]);
    assert.equal(missing.code, 3, missing.stderr);
    assert.equal(missing.stdout, "", "no link for a session that does not exist");
    const amb = await runIntendant(root, ["url", a.id.slice(0, 8)]);
    assert.equal(amb.code, 4, amb.stderr);
    assert.match(amb.stderr, /ambiguous/);
    assert.equal(amb.stdout, "");
    const extra = await runIntendant(root, ["url", a.id, "more"]);
    assert.equal(extra.code, 2);
  }));
