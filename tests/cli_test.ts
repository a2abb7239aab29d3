/**
 * CLI polish through the real program: help and version, per-command help, `serve` as
 * the default command, --json listings that parse, and the documented exit codes with
 * one-line errors plus a hint.
 */
import assert from "node:assert/strict";
import { runIntendant, sessionOf } from "./helpers/cli.ts";
import { withTempDir } from "./helpers/temp.ts";

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
