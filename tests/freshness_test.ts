/**
 * Event-driven freshness (issue 28), on real files in Claude Code's exact transcript
 * shape (fixtures/claude_fixture.ts ClaudeWriter) under a hermetic home:
 *  - the real daemon (in process, real HTTP on loopback, the real file watch): an append,
 *    a new file in a new project directory, a file renamed into place, a truncation and a
 *    deletion each become searchable / unsearchable / gone, probed by ONE search sent a
 *    second after the change, as a person would ask (the freshness contract: within 1 s);
 *    no search sweeps unless it says `refresh=1`;
 *  - with watching off and no timer due, a change stays unsearchable however often one
 *    searches (nothing on the query path sweeps), `refresh=1` sweeps first, and the
 *    answer's `freshness` says how old the index is;
 *  - fault injection through the WatchFs seam (the scheduler over the real indexer and
 *    store): a watch that cannot start because the inotify watch limit is reached, and one
 *    that fails later, hand over to polling at once with a coverage note naming the limit
 *    and how to raise it; an overflow ("rescan") sweeps everything;
 *  - `serve --locked` (the permission profile) watches and picks up an append too.
 */
import assert from "node:assert/strict";
import { dirname, join } from "node:path";
import { resolveConfig } from "../lib/config.ts";
import {
  createMessageIndex,
  createSearchEngine,
  type Freshness,
  FreshnessScheduler,
  type FsWatch,
  realWatchFs,
  type WatchEvent,
  type WatchFs,
} from "../lib/message_search/mod.ts";
import { startDaemon } from "../lib/server/mod.ts";
import { ccUuid, ClaudeWriter, msgId } from "./fixtures/claude_fixture.ts";
import { spawnIntendant, waitFor, waitForDaemonJson } from "./helpers/cli.ts";
import { figure } from "./helpers/figures.ts";
import { hermeticEnv, withTempDir } from "./helpers/temp.ts";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
/** How long after a change the one probe search is sent: the contract's bound. */
const PROBE_AFTER_MS = 1_000;

function envOf(root: string): Record<string, string> {
  // The agent homes are the machine's here (not home-only): the daemon sweeps and watches them.
  return hermeticEnv(root, { INTENDANT_MESSAGE_SEARCH_DAEMON_HOME_ONLY: "0" });
}

function cfgOf(root: string) {
  return resolveConfig(envOf(root), { cwd: root });
}

function projectDir(root: string, project = "-home-dev-app"): string {
  return join(root, "home", ".claude", "projects", project);
}

/** One Claude Code transcript: a user prompt and an assistant answer per text. */
function transcript(sessionId: string, texts: string[], startMs = Date.now() - 60_000): string {
  let t = startMs;
  const w = new ClaudeWriter({
    sessionId,
    cwd: "/home/dev/app",
    version: "2.1.3",
    clock: () => (t += 1_000),
  });
  for (const [i, text] of texts.entries()) {
    w.user(text);
    w.assistant([{ type: "text", text: `Done with step ${i}.` }], msgId(`${sessionId}:${i}`));
  }
  return w.text();
}

/** One more user row for `sessionId`, as Claude Code appends it. */
function userRow(sessionId: string, text: string, seed: string): string {
  const w = new ClaudeWriter({
    sessionId,
    cwd: "/home/dev/app",
    version: "2.1.3",
    clock: () => Date.now(),
    seed,
  });
  w.user(text);
  return w.text();
}

interface Page {
  groups: { session_key: string; source_gone: boolean }[];
  freshness: Freshness;
  state: string;
}

Deno.test("watched changes are searchable a second later with no sweep on the query path: append, new directory, rename into place, truncate, delete", () =>
  withTempDir(async (root) => {
    const cfg = cfgOf(root);
    const a = ccUuid("fresh:a");
    const aPath = join(projectDir(root), `${a}.jsonl`);
    Deno.mkdirSync(dirname(aPath), { recursive: true });
    Deno.writeTextFileSync(aPath, transcript(a, ["Set up the baseline for the parser"]));
    const d = await startDaemon({ ...cfg, server: { host: "127.0.0.1", port: 0 } });
    const search = async (q: string, extra = ""): Promise<Page> => {
      const r = await fetch(
        `${d.url}api/sessions/message-search?q=${encodeURIComponent(q)}&complete=true${extra}`,
        { headers: { authorization: `Bearer ${d.token}` } },
      );
      assert.equal(r.status, 200);
      return await r.json();
    };
    const keys = (p: Page) => p.groups.map((g) => g.session_key);
    const timings: number[] = [];
    /** Makes a change, then asks once, a second later. */
    const probe = async (change: () => void, q: string): Promise<Page> => {
      const t0 = Date.now();
      change();
      await sleep(PROBE_AFTER_MS);
      const p = await search(q);
      timings.push(Date.now() - t0);
      return p;
    };
    try {
      await waitFor(async () => (await search("baseline")).state === "ready", 20_000, "ready");
      const first = await search("baseline");
      assert.deepEqual(keys(first), [`claude-code:${a}`]);
      assert.equal(first.freshness.mode, "watching");
      assert.ok(first.freshness.age_ms! < PROBE_AFTER_MS, JSON.stringify(first.freshness));

      const size0 = Deno.statSync(aPath).size;
      const appended = await probe(
        () =>
          Deno.writeTextFileSync(aPath, userRow(a, "Now fix zephyrappend", "x1"), { append: true }),
        "zephyrappend",
      );
      assert.deepEqual(keys(appended), [`claude-code:${a}`], "an append");

      const b = ccUuid("fresh:b");
      const bPath = join(projectDir(root, "-home-dev-newproj"), `${b}.jsonl`);
      const created = await probe(() => {
        Deno.mkdirSync(dirname(bPath));
        Deno.writeTextFileSync(bPath, transcript(b, ["Explain quokkanewdir"]));
      }, "quokkanewdir");
      assert.deepEqual(keys(created), [`claude-code:${b}`], "a new file in a new directory");

      const c = ccUuid("fresh:c");
      const staged = join(root, "tmp", `${c}.jsonl.tmp`);
      Deno.mkdirSync(dirname(staged), { recursive: true });
      Deno.writeTextFileSync(staged, transcript(c, ["Review wombatrename"]));
      const renamed = await probe(
        () => Deno.renameSync(staged, join(projectDir(root), `${c}.jsonl`)),
        "wombatrename",
      );
      assert.deepEqual(keys(renamed), [`claude-code:${c}`], "a file renamed into place");

      const truncated = await probe(() => Deno.truncateSync(aPath, size0), "zephyrappend");
      assert.deepEqual(keys(truncated), [], "a truncation takes the cut line out");
      assert.deepEqual(keys(await search("baseline")), [`claude-code:${a}`]);

      const deleted = await probe(() => Deno.removeSync(bPath), "quokkanewdir");
      // A deleted transcript keeps serving, marked gone (its history is not lost with it).
      assert.deepEqual(deleted.groups.map((g) => [g.session_key, g.source_gone]), [
        [`claude-code:${b}`, true],
      ], "a deletion");
      const cov = await (await fetch(`${d.url}api/coverage`, {
        headers: { authorization: `Bearer ${d.token}` },
      })).json();
      assert.equal(cov.sources["claude-code"].source_gone, 1);
      assert.equal(cov.freshness.mode, "watching");
      assert.equal(cov.freshness.note, null);
      figure(
        "B16",
        `5 of 5 watched changes answered by one search sent ${PROBE_AFTER_MS} ms after the change (append, new directory, rename, truncate, delete; wall ${
          timings.join("/")
        } ms)`,
      );
    } finally {
      await d.shutdown();
    }
  }));

Deno.test("no search sweeps unless it asks: with watching off a change waits for refresh=1, and the answer says how old the index is", () =>
  withTempDir(async (root) => {
    const cfg = cfgOf(root);
    const a = ccUuid("quiet:a");
    const aPath = join(projectDir(root), `${a}.jsonl`);
    Deno.mkdirSync(dirname(aPath), { recursive: true });
    Deno.writeTextFileSync(aPath, transcript(a, ["Start the quiet session"]));
    const hour = 3_600_000;
    const d = await startDaemon({ ...cfg, server: { host: "127.0.0.1", port: 0 } }, {
      freshness: { watch: null, safetyNetMs: hour, pollMinMs: hour },
    });
    const search = async (q: string, extra = ""): Promise<Page> => {
      const r = await fetch(
        `${d.url}api/sessions/message-search?q=${encodeURIComponent(q)}${extra}`,
        { headers: { authorization: `Bearer ${d.token}` } },
      );
      assert.equal(r.status, 200);
      return await r.json();
    };
    try {
      await waitFor(async () => (await search("quiet")).state === "ready", 20_000, "ready");
      Deno.writeTextFileSync(aPath, userRow(a, "Where is narwhalquiet", "q1"), { append: true });
      // However often someone searches, nothing sweeps on their behalf.
      for (let i = 0; i < 8; i++) {
        assert.equal((await search("narwhalquiet")).groups.length, 0, `search ${i}`);
        await sleep(150);
      }
      const stale = await search("narwhalquiet");
      assert.equal(stale.freshness.mode, "polling");
      assert.match(stale.freshness.note!, /file watching is off/);
      assert.ok(stale.freshness.age_ms! >= 1_000, JSON.stringify(stale.freshness));
      const asked = await search("narwhalquiet", "&refresh=1");
      assert.deepEqual(asked.groups.map((g) => g.session_key), [`claude-code:${a}`]);
      assert.ok(asked.freshness.age_ms! < 1_000, JSON.stringify(asked.freshness));
      const bad = await fetch(`${d.url}api/sessions/message-search?q=quiet&refresh=maybe`, {
        headers: { authorization: `Bearer ${d.token}` },
      });
      assert.equal(bad.status, 400);
      await bad.body?.cancel();
    } finally {
      await d.shutdown();
    }
  }));

/** A WatchFs whose watches the test drives: push events, fail them, or refuse to start. */
class DrivenWatchFs implements WatchFs {
  readonly live: DrivenWatch[] = [];
  constructor(readonly refuse: (paths: string[]) => string | null) {}
  watch(paths: string[], o: { recursive: boolean }): FsWatch {
    const why = this.refuse(paths);
    if (why) throw new Error(why);
    const w = new DrivenWatch(paths, o.recursive);
    this.live.push(w);
    return w;
  }
  exists(path: string): Promise<boolean> {
    return realWatchFs.exists(path);
  }
}

class DrivenWatch implements FsWatch {
  #queue: (WatchEvent | Error)[] = [];
  #wake: (() => void) | null = null;
  #closed = false;
  constructor(readonly paths: string[], readonly recursive: boolean) {}
  push(e: WatchEvent | Error): void {
    this.#queue.push(e);
    this.#wake?.();
  }
  close(): void {
    this.#closed = true;
    this.#wake?.();
  }
  async *[Symbol.asyncIterator](): AsyncIterator<WatchEvent> {
    while (!this.#closed) {
      const e = this.#queue.shift();
      if (e instanceof Error) throw e;
      if (e) {
        yield e;
        continue;
      }
      await new Promise<void>((r) => (this.#wake = r));
      this.#wake = null;
    }
  }
}

/** The scheduler over the real indexer and store of `root`, with `fs` as its watch. */
async function scheduled(root: string, fs: WatchFs, lines: string[]) {
  const cfg = cfgOf(root);
  const { store, indexer, watchTargets } = await createMessageIndex(cfg, { workers: 1 });
  const sched = new FreshnessScheduler({
    indexer,
    targets: watchTargets,
    fs,
    pollMinMs: 200,
    debounceMs: 20,
    logger: (l) => lines.push(l),
  });
  const engine = createSearchEngine({
    store,
    windowDays: cfg.messageSearch.windowDays,
    cursorKey: new Uint8Array(32).fill(3),
    isReady: () => indexer.ready,
  });
  const found = async (q: string) =>
    (await engine.search({ q, complete: true })).groups.map((g) => g.session_key);
  const stop = async () => {
    await sched.stop();
    await indexer.stop();
  };
  return { sched, indexer, found, stop };
}

Deno.test("a watch that cannot start at the inotify watch limit, or fails later, hands over to polling at once with a note; an overflow sweeps everything", () =>
  withTempDir(async (root) => {
    const a = ccUuid("fault:a");
    const aPath = join(projectDir(root), `${a}.jsonl`);
    Deno.mkdirSync(dirname(aPath), { recursive: true });
    Deno.writeTextFileSync(aPath, transcript(a, ["Begin the fault drill"]));
    const projects = dirname(projectDir(root));
    // The state root's logs exist, so one root besides Claude's is watched directly.
    Deno.mkdirSync(join(root, "state", "logs"), { recursive: true });

    // 1. The Claude root cannot be watched: notify's own message at the watch limit.
    const lines: string[] = [];
    const limited = new DrivenWatchFs((paths) =>
      paths.includes(projects) ? `OS file watch limit reached. about ["${projects}"]` : null
    );
    const one = await scheduled(root, limited, lines);
    await one.sched.start();
    await one.sched.refresh();
    const st = one.sched.status();
    assert.equal(st.mode, "polling");
    assert.match(st.note!, /1 of \d+ roots/);
    assert.match(st.note!, /fs\.inotify\.max_user_watches/);
    assert.match(st.note!, /sudo sysctl fs\.inotify\.max_user_watches=\d+/);
    assert.ok(lines.some((l) => /max_user_watches/.test(l)), lines.join("\n"));
    // The other roots were still watched (the group was retried path by path).
    assert.ok(limited.live.length > 0 && st.watched > 0, JSON.stringify(st));
    Deno.writeTextFileSync(aPath, userRow(a, "Polling finds ibexpoll", "f1"), { append: true });
    await waitFor(async () => (await one.found("ibexpoll")).length === 1, 5_000, "polled append");
    await one.stop();

    // 2. Watching works, then the watch on the Claude root fails mid-run.
    const driven = new DrivenWatchFs(() => null);
    const two = await scheduled(root, driven, []);
    await two.sched.start();
    await two.sched.refresh();
    assert.equal(two.sched.status().mode, "watching");
    const claudeWatch = driven.live.find((w) => w.paths.includes(projects))!;
    // An event reaches a scoped sweep: the driven watch stands for inotify here.
    Deno.writeTextFileSync(aPath, userRow(a, "Driven event for lynxevent", "f2"), { append: true });
    claudeWatch.push({ kind: "modify", paths: [aPath] });
    await waitFor(async () => (await two.found("lynxevent")).length === 1, 5_000, "event sweep");
    claudeWatch.push(new Error("No space left on device (os error 28)"));
    await waitFor(() => two.sched.status().mode === "polling", 5_000, "fallback");
    assert.match(two.sched.status().note!, /max_user_watches/);
    Deno.writeTextFileSync(aPath, userRow(a, "After the failure comes okapifail", "f3"), {
      append: true,
    });
    await waitFor(async () => (await two.found("okapifail")).length === 1, 5_000, "polled");
    await two.stop();

    // 3. An overflow: the OS dropped events, so a change no event named is swept anyway.
    const fs3 = new DrivenWatchFs(() => null);
    const three = await scheduled(root, fs3, []);
    await three.sched.start();
    await three.sched.refresh();
    assert.equal(three.sched.status().mode, "watching");
    Deno.writeTextFileSync(aPath, userRow(a, "Overflow hides tapirrescan", "f4"), { append: true });
    await sleep(300);
    assert.deepEqual(await three.found("tapirrescan"), [], "no event, no sweep");
    fs3.live[0]!.push({ kind: "other", paths: [], flag: "rescan" });
    await waitFor(async () => (await three.found("tapirrescan")).length === 1, 5_000, "rescan");
    await three.stop();
    figure(
      "B17",
      "watch refused at the inotify watch limit: polling at once, note names fs.inotify.max_user_watches and the sysctl; watch failing mid-run: polling at once, append found; overflow: full sweep, unnamed change found",
    );
  }));

Deno.test("serve --locked (the permission profile) watches the agent homes: an append is searchable a second later", () =>
  withTempDir(async (root) => {
    const a = ccUuid("locked:a");
    const aPath = join(projectDir(root), `${a}.jsonl`);
    Deno.mkdirSync(dirname(aPath), { recursive: true });
    Deno.writeTextFileSync(aPath, transcript(a, ["Open the locked session"]));
    const run = spawnIntendant(root, ["serve", "--locked", "--port", "0"], {
      env: { INTENDANT_MESSAGE_SEARCH_DAEMON_HOME_ONLY: "0" },
    });
    try {
      const info = await waitForDaemonJson(root, 30_000);
      const search = async (q: string): Promise<Page> => {
        const r = await fetch(
          `http://127.0.0.1:${info.port}/api/sessions/message-search?q=${q}&complete=true`,
          { headers: { authorization: `Bearer ${info.token}` } },
        );
        return await r.json();
      };
      await waitFor(async () => (await search("locked")).groups.length === 1, 30_000, "indexed");
      Deno.writeTextFileSync(aPath, userRow(a, "Locked profile sees gazelleappend", "l1"), {
        append: true,
      });
      await sleep(PROBE_AFTER_MS);
      const p = await search("gazelleappend");
      assert.deepEqual(p.groups.map((g) => g.session_key), [`claude-code:${a}`]);
      assert.equal(p.freshness.mode, "watching");
    } finally {
      run.child.kill("SIGTERM");
      await run.done;
    }
  }));
