/**
 * Reliability-plan F3: no terminal escape reaches a terminal. Hostile probes — ESC/CSI/OSC
 * sequences (window title, erase, hyperlink, colour), 8-bit C1 controls, BEL, NUL,
 * backspace, bare CR, bidi overrides and isolates, lone surrogates — are planted as
 * session names set through the API (native meta and the external-name overlay) and as
 * message text, then every CLI command that prints untrusted text runs through the real
 * program: sessions, search (human and --json), index, trash, restore, and delete's
 * confirmation. Not one control byte may reach stdout or stderr, and names must be stored
 * clean (normalized on write). The negative control prints the same names and snippets
 * the way the CLI used to (raw interpolation): it emits control bytes.
 */
import assert from "node:assert/strict";
import { runCli } from "../lib/cli/mod.ts";
import { readMeta } from "../lib/session_log/mod.ts";
import { runIntendant } from "./helpers/cli.ts";
import { figure } from "./helpers/figures.ts";
import { writeNativeSession } from "./helpers/native_corpus.ts";
import { fakeIo, withTempDir } from "./helpers/temp.ts";
import { buildWorld } from "./helpers/world.ts";

const ESC = "\x1b";
/** One hostile shape per probe; each rides on a unique word so search finds its session. */
const PROBES: string[] = [
  `${ESC}]0;pwned title\x07`, // OSC window title, BEL-terminated
  `${ESC}]2;pwned${ESC}\\`, // OSC title, ST-terminated
  `${ESC}[2J${ESC}[H`, // erase screen, cursor home
  `${ESC}]8;;http://evil.example${ESC}\\red link${ESC}]8;;${ESC}\\`, // OSC 8 hyperlink
  `${ESC}[31;1mred${ESC}[0m`, // colour
  "\x9b2J\x9d0;t\x9c", // 8-bit CSI and OSC with ST
  "bell\x07nul\x00bs\x08", // BEL, NUL, backspace
  "over\rwrite", // a bare CR rewrites the visible line
  "\u202egnp.exe\u202c \u2066iso\u2069", // bidi override and isolate
  "lone\ud800high \udc00low", // lone surrogates
  `${ESC}(B${ESC}7${ESC}8`, // charset and save/restore escapes
  "\x7fdel\x85nel", // DEL and C1 NEL
];

/** What no terminal output may hold: C0 (but TAB, LF), DEL, C1, bidi controls. */
// deno-lint-ignore no-control-regex
const FORBIDDEN = /[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]/g;

function controlBytes(text: string): number {
  return text.match(FORBIDDEN)?.length ?? 0;
}

Deno.test("F3: no control byte reaches the terminal from names, titles or message text", () =>
  withTempDir(async (root) => {
    const w = await buildWorld(root);
    const ids: string[] = [];
    for (const [i, probe] of PROBES.entries()) {
      const s = await writeNativeSession(w.cfg.logsDir, {
        turns: 1,
        task: `Probe okapi${i} says ${probe} here`,
        word: () => `okapi${i} ${probe}`,
      });
      ids.push(s.id);
      // Names set through the API are normalized on write.
      const r = await w.get(`/api/session/intendant:${s.id}/name`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ name: `name ${probe} ${i}` }),
      });
      assert.equal(r.status, 200);
      const meta = await readMeta(s.dir);
      assert.ok(
        meta.ok && meta.meta.name && controlBytes(meta.meta.name) === 0,
        `stored clean ${i}`,
      );
    }
    // An external session's overlay name, through the same route.
    const external = (await (await w.get("/api/sessions?source=codex&limit=1")).json())
      .sessions[0].key as string;
    const ov = await w.get(`/api/session/${encodeURIComponent(external)}/name`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ name: `overlay ${PROBES.join(" ")}` }),
    });
    assert.equal(ov.status, 200);
    assert.equal(controlBytes(Deno.readTextFileSync(w.cfg.sessionNamesPath)), 0);
    await w.indexer.sweep();

    const outputs: { what: string; text: string }[] = [];
    const cli = async (args: string[]) => {
      const r = await runIntendant(root, args, { env: w.env });
      assert.equal(r.code, 0, `${args.join(" ")}: ${r.stderr}`);
      outputs.push({ what: args.join(" "), text: r.stdout + r.stderr });
      return r;
    };
    const commands = [
      ["sessions", "--limit", "200"],
      ["sessions", "--limit", "200", "--json"],
      ["sessions", "okapi"],
      ["search", "okapi", "--limit", "50"],
      ["search", "okapi", "--limit", "50", "--json"],
      ["index"],
    ];
    for (const c of commands) await cli(c);
    const search = outputs.find((o) =>
      o.what.startsWith("search okapi --limit 50") && !o.what.endsWith("--json")
    )!;
    // Every probe's session is found (the marks survive the sanitizer).
    assert.ok((search.text.match(/«okapi»/g)?.length ?? 0) >= PROBES.length, search.text);
    // delete's confirmation shows the (hostile) name: answered "n", nothing is deleted.
    const io = fakeIo(w.env, root);
    io.stdinIsTty = true;
    io.readLine = () => Promise.resolve("n");
    await runCli(["delete", ids[0]!], io);
    outputs.push({ what: "delete (confirmation)", text: io.out.join("") + io.err.join("") });
    // trash and restore list and name what they move.
    await cli(["delete", "--yes", ids[1]!]);
    await cli(["trash"]);
    await cli(["trash", "--json"]);
    await cli(["restore", ids[1]!]);

    const printed = outputs.reduce((n, o) => n + controlBytes(o.text), 0);
    for (const o of outputs) assert.equal(controlBytes(o.text), 0, `${o.what}:\n${o.text}`);
    // Negative control: the same names and snippets printed the old way (raw interpolation).
    const listed = JSON.parse(outputs[1]!.text) as {
      sessions: { name: string | null; title: string | null }[];
    };
    const raw = listed.sessions.map((s) => `${s.title ?? ""}\n`).join("") +
      PROBES.map((p, i) => `name ${p} ${i}\n`).join("");
    const control = controlBytes(raw);
    assert.ok(control > 0, "raw printing emits control bytes");
    figure(
      "F3",
      `control bytes printed: ${printed} over ${PROBES.length} probes × ${outputs.length} commands (names stored clean: ${
        PROBES.length + 1
      }/${PROBES.length + 1}), control (raw printing): ${control} control bytes`,
    );
  }));

Deno.test("H10: control characters in any argument a CLI error echoes are never printed", () =>
  withTempDir(async (root) => {
    const w = await buildWorld(root);
    // Every place an argument comes back in an error: the command name, a flag name, a
    // flag value, an enum value, a session id, a cursor, a team URL.
    const argvs = (p: string): string[][] => [
      [`nosuch${p}`],
      ["search", "ok", `--bogus${p}`],
      ["search", "ok", "--limit", `1${p}`],
      ["search", "ok", "--source", `codex${p}`],
      ["search", "ok", "--role", `user${p}`],
      ["search", "ok", "--cursor", `c${p}`],
      ["delete", `abcdef12${p}`, "--yes"],
      ["restore", `abcdef12${p}`],
      ["url", `abcdef12${p}`],
      ["team", "status", "--team", `postgres://h${p}/db`],
      ["sessions", "--limit", `x${p}`],
    ];
    let printed = 0;
    let runs = 0;
    let control = 0;
    for (const p of PROBES) {
      for (const argv of argvs(p)) {
        const io = fakeIo(w.env, root);
        const code = await runCli(argv, io);
        const text = io.out.join("") + io.err.join("");
        assert.notEqual(code, 0, `${JSON.stringify(argv)} is refused`);
        assert.equal(controlBytes(text), 0, `${JSON.stringify(argv)}:\n${JSON.stringify(text)}`);
        printed += controlBytes(text);
        runs++;
        // Negative control: the argument echoed as the CLI used to (raw interpolation).
        control += controlBytes(`intendant: unknown command "${argv.at(-1)}"\n`) > 0 ? 1 : 0;
      }
    }
    assert.ok(control > 0, "raw echoing prints control bytes");
    figure(
      "H10",
      `control bytes printed: ${printed} over ${PROBES.length} probes × ${
        argvs("").length
      } arguments (${runs} refused runs), control (raw echo): ${control}/${runs} runs print control bytes`,
    );
  }));
