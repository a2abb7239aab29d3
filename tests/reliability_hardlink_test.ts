/**
 * Reliability-plan F1: hard links planted into native session directories are never
 * indexed and never served, and there is one contained reader.
 *
 * Plants (tests/helpers/hardlink_plant.ts): per round a sidecar span and a top-level span
 * named by conversation_message rows, a session_meta.json and a whole session.jsonl, each
 * a hard link to a file outside the state root whose unique word is the secret. The real
 * indexer (createMessageIndex: the daemon's wiring) sweeps them; then every reader that
 * can return bytes is asked for the secrets: search (complete), the session listing,
 * detail, locate (with the very locator the old indexer minted for the span), Deep
 * Search, the report zip, the session_log readers (span, meta, spine) and coverage,
 * which must COUNT the refusals (`hardlinked`, `discovery:hardlinked`).
 * The same under `serve --locked` (the exact child it re-executes, target directory not
 * granted), over HTTP; the control then runs under the very same flags (a probe): the
 * profile lets the naive reader read every secret through its inside name, while reading
 * the target by its own name is NotCapable — the gap only the link count closes.
 * Negative control: the naive reader every copy used to be (lstat, open, fstat dev+ino,
 * no link count) reads every planted secret.
 * Also: no module outside lib/durable opens files by hand (tests/helpers/reader_scan.ts),
 * and the scanner catches the pattern it is meant to catch.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { resolveConfig } from "../lib/config.ts";
import { lockedCommand } from "../lib/relaunch.ts";
import {
  createMessageIndex,
  createSearchEngine,
  encodeLocator,
  hash16Of,
  indexerCoverage,
} from "../lib/message_search/mod.ts";
import { deepSearch, listSessions, sessionDetail, sessionReportZip } from "../lib/catalog/mod.ts";
import { readMeta, readSessionEvents, readSessionSpan } from "../lib/session_log/mod.ts";
import { ContainedReadError } from "../lib/durable/mod.ts";
import { naiveContainedRead, plantHardlinks } from "./helpers/hardlink_plant.ts";
import { readersOutsideContained, scanSource } from "./helpers/reader_scan.ts";
import { readZip } from "./helpers/catalog_zip.ts";
import { figure, STRESS } from "./helpers/figures.ts";
import { DENO, hermeticEnv, REPO_ROOT, withTempDir } from "./helpers/temp.ts";
import { MAIN, waitFor } from "./helpers/cli.ts";

const ROUNDS = STRESS ? 25 : 3;

Deno.test("F1: hardlinked sidecars, spines and metas are never indexed, served or read", () =>
  withTempDir(async (tmp) => {
    const root = Deno.realPathSync(tmp);
    const outside = join(root, "outside");
    Deno.mkdirSync(outside);
    const env = hermeticEnv(root);
    const cfg = resolveConfig(env, { cwd: root });
    Deno.mkdirSync(cfg.logsDir, { recursive: true, mode: 0o700 });
    const plant = await plantHardlinks(cfg.logsDir, outside, ROUNDS);
    const { store, indexer } = await createMessageIndex(cfg);
    const report = await indexer.sweep();
    const engine = createSearchEngine({
      store,
      windowDays: null,
      cursorKey: new Uint8Array(32).fill(7),
      isReady: () => true,
    });
    const deps = { logsDir: cfg.logsDir, store, namesPath: cfg.sessionNamesPath };
    // Which secrets came back, and through which reader.
    const leaks = new Map<string, Set<string>>();
    const scan = (reader: string, text: string) => {
      for (const l of plant.links) {
        if (text.includes(l.secret)) {
          leaks.set(l.secret, (leaks.get(l.secret) ?? new Set()).add(reader));
        }
      }
    };

    // The sessions around the plants still index: the refusal costs only the planted part.
    for (const s of plant.spanSessions) {
      const r = await engine.search({ q: s.visibleWord, complete: true });
      assert.equal(r.groups.length, 1, `${s.visibleWord} is searchable`);
    }
    for (const l of plant.links) {
      scan("search", JSON.stringify(await engine.search({ q: l.secret, complete: true })));
      scan(
        "search superseded",
        JSON.stringify(
          await engine.search({ q: l.secret, complete: true, include_superseded: true }),
        ),
      );
      scan("deep search", JSON.stringify(await deepSearch(deps, { q: l.secret })));
    }
    scan("listing", JSON.stringify(await listSessions(deps, { limit: 200 })));
    for (const s of [...plant.spanSessions.map((x) => x.id), ...plant.spineSessions]) {
      const key = `intendant:${s}`;
      scan("detail", JSON.stringify(await sessionDetail(deps, key, { limit: 1000 })));
      const zip = await sessionReportZip(deps, key);
      scan("report zip", readZip(zip).map((e) => new TextDecoder().decode(e.data)).join("\n"));
    }
    // Locate with the locator the old indexer minted for each planted span.
    for (const l of plant.links.filter((x) => x.rel !== undefined)) {
      const dir = join(cfg.logsDir, l.sessionId);
      const lines = Deno.readTextFileSync(join(dir, "session.jsonl")).split("\n");
      const line = 1 +
        lines.findIndex((t) => t.includes(`"conversation_message"`) && t.includes(l.rel!));
      const locator = encodeLocator({
        v: 1,
        kind: "native_sidecar_span",
        file: l.rel!,
        offset: 0,
        len: l.bytes!,
        line,
        hash: hash16Of(Deno.readFileSync(l.target)),
      });
      const d = await sessionDetail(deps, `intendant:${l.sessionId}`, { locate: locator });
      scan("locate", JSON.stringify(d));
    }
    // The session_log readers refuse each planted file with a typed reason.
    const refusals: string[] = [];
    for (const l of plant.links) {
      const dir = join(cfg.logsDir, l.sessionId);
      try {
        if (l.kind === "meta") {
          const m = await readMeta(dir);
          refusals.push(m.ok ? "read" : m.reason);
          if (m.ok) scan("readMeta", JSON.stringify(m.meta));
        } else if (l.kind === "spine") {
          scan("readSessionEvents", JSON.stringify(await readSessionEvents(dir)));
          refusals.push("read");
        } else {
          scan(
            "readSessionSpan",
            new TextDecoder().decode(readSessionSpan(dir, l.rel!, 0, l.bytes!)),
          );
          refusals.push("read");
        }
      } catch (err) {
        assert.ok(err instanceof ContainedReadError, String(err));
        refusals.push(err.reason);
      }
    }
    // Coverage counts them: the spans and metas per shard, the spines at discovery.
    const coverage = indexerCoverage(await store.readManifest(), { indexer, windowDays: null });
    const skipped = coverage.sources.intendant!.skipped;

    // Negative control: the naive reader (lstat + open + dev/ino, no nlink) reads them all.
    let controlRead = 0;
    for (const l of plant.links) {
      const bytes = await naiveContainedRead(l.path);
      if (bytes && new TextDecoder().decode(bytes).includes(l.secret)) controlRead++;
    }
    const outsideReaders = readersOutsideContained(join(REPO_ROOT, "lib"));
    const n = plant.links.length;
    figure(
      "F1",
      `hardlinked files read: ${leaks.size}/${n}, readers outside the contained reader: ` +
        `${outsideReaders.length} (control: a naive lstat+dev/ino reader read ${controlRead}/${n})`,
    );
    // deno-lint-ignore no-console
    console.log(
      `F1 detail: ${ROUNDS} rounds × (sidecar span, top-level span, meta, spine); readers ` +
        `asked: search (+superseded), listing, detail, locate (old locators), deep search, ` +
        `report zip, readSessionSpan/readMeta/readSessionEvents; coverage skipped ` +
        `${JSON.stringify(skipped)}; leaks ${
          JSON.stringify([...leaks].map(([k, v]) => [k, [...v]]))
        }`,
    );
    assert.deepEqual([...leaks.keys()], []);
    assert.deepEqual(refusals, plant.links.map(() => "hardlinked"));
    assert.equal(skipped["hardlinked"], 3 * ROUNDS, JSON.stringify(skipped));
    assert.equal(skipped["discovery:hardlinked"], ROUNDS, JSON.stringify(skipped));
    assert.deepEqual(report.sources.intendant!.errors, []);
    assert.deepEqual(outsideReaders, []);
    assert.equal(controlRead, n, "the naive reader must read every planted secret");
  }));

Deno.test("F1: the reader scan flags hand-made contained reads outside lib/durable", () => {
  // The shapes the five old copies had: each must be caught.
  const copies = [
    `import { constants as FS, promises as fsp } from "node:fs";\n` +
    `const h = await fsp.open(path, FS.O_RDONLY | FS.O_NOFOLLOW | FS.O_NONBLOCK);`,
    `import nodeFs from "node:fs";\nconst fd = nodeFs.openSync(path, OPEN_FLAGS);\n` +
    `const st = nodeFs.fstatSync(fd);`,
    `const f = await Deno.open(path, { read: true });\nconst after = await f.stat();\n` +
    `if (after.ino !== before.ino) throw new Error("swapped");`,
    `const file = Deno.openSync(path, { write: true });\nconst st = file.statSync();`,
  ];
  for (const c of copies) assert.notDeepEqual(scanSource(c), [], c);
  // Comments do not count: the contained reader is documented everywhere it is used.
  assert.deepEqual(
    scanSource(`/** Opened O_NOFOLLOW | O_NONBLOCK by the reader. */\n// fstat`),
    [],
  );
});

function freePort(): number {
  const l = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (l.addr as Deno.NetAddr).port;
  l.close();
  return port;
}

Deno.test("F1: under `serve --locked` hardlinked files are never served; the naive reader would read them", () =>
  withTempDir(async (tmp) => {
    const root = Deno.realPathSync(tmp);
    const outside = join(root, "outside");
    Deno.mkdirSync(outside);
    const port = freePort();
    const env: Record<string, string> = { ...hermeticEnv(root), INTENDANT_PORT: String(port) };
    Deno.mkdirSync(env.TMPDIR!, { recursive: true });
    const cfg = resolveConfig(env, { cwd: root });
    Deno.mkdirSync(cfg.logsDir, { recursive: true, mode: 0o700 });
    const plant = await plantHardlinks(cfg.logsDir, outside, ROUNDS);
    // The exact child `intendant serve --locked` re-executes (lib/relaunch.ts).
    const mainModule = pathToFileURL(MAIN).href;
    const cmd = lockedCommand({
      cfg,
      args: ["serve"],
      mainModule,
      denoPath: DENO,
      os: Deno.build.os,
      projectRoot: root,
    });
    const flags = cmd.slice(1, cmd.indexOf(mainModule));
    assert.ok(!flags.some((f) => f.includes(outside)), "the outside dir is not granted");
    const childEnv = { ...env, PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin", NO_COLOR: "1" };
    const daemon = new Deno.Command(DENO, {
      args: cmd,
      cwd: root,
      clearEnv: true,
      env: childEnv,
      stdout: "null",
      stderr: "piped",
    }).spawn();
    const stderr = new Response(daemon.stderr).text();
    const leaks = new Map<string, Set<string>>();
    const text = (b: Uint8Array) => new TextDecoder().decode(b);
    let skipped: Record<string, number> = {};
    let probe: { direct: string; naive: string; contained: string }[];
    try {
      await waitFor(
        () => {
          try {
            return Deno.statSync(cfg.daemonJsonPath).isFile;
          } catch {
            return false;
          }
        },
        60_000,
        "daemon.json",
      );
      const info = JSON.parse(Deno.readTextFileSync(cfg.daemonJsonPath));
      const get = async (path: string) => {
        const r = await fetch(`http://127.0.0.1:${port}${path}`, {
          headers: { authorization: `Bearer ${info.token}` },
        });
        return { status: r.status, body: new Uint8Array(await r.arrayBuffer()) };
      };
      const check = async (reader: string, path: string, decode = text) => {
        const r = await get(path);
        assert.ok(r.status < 500, `${reader} ${path}: ${r.status}`);
        const shown = decode(r.body);
        for (const l of plant.links) {
          if (shown.includes(l.secret)) {
            leaks.set(l.secret, (leaks.get(l.secret) ?? new Set()).add(reader));
          }
        }
        return shown;
      };
      await waitFor(
        async () => JSON.parse(text((await get("/api/coverage")).body)).state === "ready",
        60_000,
        "first sweep",
      );
      for (const s of plant.spanSessions) {
        const r = JSON.parse(
          await check("search", `/api/sessions/message-search?q=${s.visibleWord}&complete=true`),
        );
        assert.equal(r.groups.length, 1, `${s.visibleWord} is searchable under the profile`);
      }
      for (const l of plant.links) {
        await check("search", `/api/sessions/message-search?q=${l.secret}&complete=true`);
        await check("deep search", `/api/sessions/search?q=${l.secret}`);
      }
      await check("listing", "/api/sessions?limit=200");
      for (const id of [...plant.spanSessions.map((x) => x.id), ...plant.spineSessions]) {
        await check("detail", `/api/session/${id}?limit=1000`);
        await check("replay", `/api/session/${id}/replay`);
        await check(
          "report zip",
          `/api/session/${id}/report`,
          (b) => readZip(b).map((e) => text(e.data)).join("\n"),
        );
      }
      for (const l of plant.links.filter((x) => x.rel !== undefined)) {
        const lines = Deno.readTextFileSync(join(cfg.logsDir, l.sessionId, "session.jsonl"))
          .split("\n");
        const line = 1 +
          lines.findIndex((t) => t.includes(`"conversation_message"`) && t.includes(l.rel!));
        const locator = encodeLocator({
          v: 1,
          kind: "native_sidecar_span",
          file: l.rel!,
          offset: 0,
          len: l.bytes!,
          line,
          hash: hash16Of(Deno.readFileSync(l.target)),
        });
        await check("locate", `/api/session/${l.sessionId}?locate=${locator}`);
      }
      const coverage = JSON.parse(text((await get("/api/coverage")).body));
      skipped = coverage.sources.intendant.skipped;
      // The control and the profile's own view, under the very same flags.
      const run = await new Deno.Command(DENO, {
        args: [
          "run",
          ...flags,
          join(REPO_ROOT, "tests", "helpers", "hardlink_probe.ts"),
          JSON.stringify(plant.links.map(({ path, target, secret }) => ({ path, target, secret }))),
        ],
        cwd: root,
        clearEnv: true,
        env: childEnv,
        stdout: "piped",
        stderr: "piped",
      }).output();
      assert.equal(run.code, 0, text(run.stderr));
      probe = JSON.parse(text(run.stdout).trim().split("\n").at(-1)!);
    } finally {
      daemon.kill("SIGTERM");
      const status = await daemon.status;
      const err = await stderr;
      assert.equal(status.code, 0, err);
    }
    const n = plant.links.length;
    const controlRead = probe.filter((p) => p.naive === "READ SECRET").length;
    const directDenied = probe.filter((p) => p.direct === "NotCapable").length;
    const refused = probe.filter((p) => p.contained === "refused: hardlinked").length;
    figure(
      "F1",
      `hardlinked files read: ${leaks.size}/${n} under serve --locked (HTTP), readers outside ` +
        `the contained reader: ${readersOutsideContained(join(REPO_ROOT, "lib")).length} ` +
        `(control under the same profile: naive reader read ${controlRead}/${n}, the targets ` +
        `by name NotCapable ${directDenied}/${n})`,
    );
    // deno-lint-ignore no-console
    console.log(
      `F1 locked detail: HTTP search, deep search, listing, detail, replay, report zip, ` +
        `locate; coverage skipped ${JSON.stringify(skipped)}; contained reader in the probe ` +
        `refused ${refused}/${n} as hardlinked; leaks ${
          JSON.stringify([...leaks].map(([k, v]) => [k, [...v]]))
        }`,
    );
    assert.deepEqual([...leaks.keys()], []);
    assert.equal(skipped["hardlinked"], 3 * ROUNDS, JSON.stringify(skipped));
    assert.equal(skipped["discovery:hardlinked"], ROUNDS, JSON.stringify(skipped));
    assert.equal(refused, n);
    assert.equal(directDenied, n, "the profile does not grant the outside targets");
    assert.equal(controlRead, n, "a naive reader under the profile reads every secret");
  }));
