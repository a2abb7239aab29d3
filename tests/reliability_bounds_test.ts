/**
 * Reliability-plan F4 (issue 15): every heavy endpoint is bounded. The REAL daemon
 * (`main.ts serve --port 0`, a subprocess with the daemon's V8 flags) over a world with a
 * big native session (24 MB of session.jsonl; 120 MB under STRESS), 150 small native
 * sessions and a long Codex rollout, all indexed by its first sweep. Then, over real HTTP,
 * 150 concurrent requests of each heavy kind — Deep Search, catalog listing, session
 * detail (pages deep inside the big session, hit scans, the external session), replay
 * pages, report zips — one kind at a time, then 40 of each at once (200 connections: the
 * TCP front admits 256, http_front.ts). Each burst uses its own HTTP client, closed after
 * it, so no kept-alive connection of one burst is reused in the next. Measured from outside:
 *  - in flight per route: every admitted answer carries X-Intendant-In-Flight (the gate's
 *    count when it was admitted); its maximum must not pass the route's cap;
 *  - every 429 carries Retry-After; nothing answers 5xx;
 *  - the daemon's peak RSS: /proc/<pid>/clear_refs resets VmHWM after the baseline, and
 *    VmRSS is sampled every 20 ms meanwhile; the delta over the baseline must stay within
 *    the message arena cap (192 MiB) + 128 MiB.
 * Negative control: the detail read as it was (whole spine in memory, every row built),
 * 150 requests with no cap, in a child process with the same V8 flags: its RSS passes the
 * same bound.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { resolveConfig } from "../lib/config.ts";
import { DEFAULT_ARENA_BYTES } from "../lib/message_search/query/types.ts";
import { DAEMON_V8_FLAGS } from "../lib/relaunch.ts";
import { HEAVY_GATE_CAPACITY, IN_FLIGHT_HEADER } from "../lib/server/heavy_gates.ts";
import { writeBigCodex, writeBigNative, writeSmallNatives } from "./helpers/big_native.ts";
import { pythonZipTest, readZip } from "./helpers/catalog_zip.ts";
import { MAIN } from "./helpers/cli.ts";
import { figure, STRESS } from "./helpers/figures.ts";
import { DENO, hermeticEnv, REPO_ROOT, withTempDir } from "./helpers/temp.ts";

const N = 150;
const MiB = 1024 * 1024;
const BOUND_MIB = DEFAULT_ARENA_BYTES / MiB + 128;
const BIG_ID = "019b1111-0000-7000-8000-000000000001";
type Kind = keyof typeof HEAVY_GATE_CAPACITY;

interface Answer {
  kind: Kind;
  status: number;
  retryAfter: string | null;
  inFlight: number | null;
  bytes: Uint8Array | null;
}

function status(pid: number): { rss: number; hwm: number } {
  const s = Deno.readTextFileSync(`/proc/${pid}/status`);
  const kb = (k: string) => Number(new RegExp(`${k}:\\s+(\\d+) kB`).exec(s)?.[1] ?? 0);
  return { rss: kb("VmRSS") / 1024, hwm: kb("VmHWM") / 1024 };
}

async function waitFor<T>(fn: () => Promise<T | null>, ms: number, what: string): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await fn().catch(() => null);
    if (v !== null) return v;
    if (Date.now() > end) throw new Error(`Timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

Deno.test("F4 every heavy endpoint is capped (429 + Retry-After), the daemon's RSS stays within arena cap + 128 MiB, 0 5xx", () =>
  withTempDir(async (root) => {
    const env = hermeticEnv(root, { INTENDANT_MESSAGE_SEARCH_DAEMON_HOME_ONLY: "no" });
    const cfg = resolveConfig(env, { cwd: root });
    const big = await writeBigNative(cfg.logsDir, {
      id: BIG_ID,
      bytes: STRESS ? 120e6 : 24e6,
      needle: "QUOKKA",
    });
    await writeSmallNatives(cfg.logsDir, 150);
    const codex = await writeBigCodex(env.CODEX_HOME!, { bytes: STRESS ? 24e6 : 6e6 });
    const rows = big.turns + Math.floor(big.turns / 3) + 3;

    const child = new Deno.Command(DENO, {
      args: [
        "run",
        "-A",
        "--quiet",
        `--v8-flags=${DAEMON_V8_FLAGS.join(",")}`,
        MAIN,
        "serve",
        "--port",
        "0",
      ],
      cwd: REPO_ROOT,
      clearEnv: true,
      env: { PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin", NO_COLOR: "1", ...env },
      stdout: "piped",
      stderr: "piped",
    }).spawn();
    let out = "";
    const drain = Promise.all([child.stdout, child.stderr].map(async (s) => {
      const dec = new TextDecoder();
      for await (const c of s) out += dec.decode(c, { stream: true });
    }));
    try {
      const info = await waitFor(
        async () => {
          const j = JSON.parse(await Deno.readTextFile(cfg.daemonJsonPath));
          return j.pid === child.pid ? j as { port: number; token: string } : null;
        },
        30_000,
        "daemon.json",
      );
      const base = `http://127.0.0.1:${info.port}`;
      // One request per connection: no kept-alive connection outlives its burst (the front
      // admits 256 connections and closes idle ones to make room).
      const headers = { authorization: `Bearer ${info.token}`, connection: "close" };
      await waitFor(
        async () => {
          const cov = await (await fetch(`${base}/api/coverage`, { headers })).json();
          return cov.state === "ready" && cov.sources?.codex?.sessions >= 1 ? cov : null;
        },
        STRESS ? 600_000 : 120_000,
        "the first sweep",
      );

      // Baseline: the daemon after its first sweep, settled; the peak counter reset.
      await new Promise((r) => setTimeout(r, 1500));
      const before = status(child.pid);
      let hwmReset = true;
      try {
        Deno.writeTextFileSync(`/proc/${child.pid}/clear_refs`, "5");
      } catch {
        // Without clear_refs (an old kernel, a restricted /proc) the samples alone count.
        hwmReset = false;
      }
      let sampled = before.rss;
      let burstPeak = before.rss;
      const sampler = setInterval(() => {
        try {
          const now = status(child.pid).rss;
          sampled = Math.max(sampled, now);
          burstPeak = Math.max(burstPeak, now);
        } catch {
          // The daemon died: the requests below fail and say so.
        }
      }, 20);

      const urls: Record<Kind, (i: number) => string> = {
        deep: (i) => `/api/sessions/search?q=${i % 2 ? "QUOKKA" : "ledger+totals"}&limit=50`,
        catalog: (i) => `/api/sessions?limit=50&offset=${(i * 7) % 150}`,
        // The first of a burst are admitted: a page deep inside, the external session, a
        // hit scan over the whole big session, the last page; then pages all over.
        detail: (i) =>
          i % 4 === 1
            ? `/api/session/${encodeURIComponent(codex.key)}?limit=200`
            : i % 4 === 2
            ? `/api/session/${BIG_ID}?q=QUOKKA&limit=50`
            : i % 4 === 3
            ? `/api/session/${BIG_ID}?offset=${rows - 200}&limit=200`
            : `/api/session/${BIG_ID}?offset=${
              Math.floor((rows * ((i * 37 + 60) % 97)) / 97)
            }&limit=200`,
        replay: (i) => `/api/session/${BIG_ID}/replay?offset=${(i * 997) % big.lines}&limit=1000`,
        report: () => `/api/session/${BIG_ID}/report`,
      };
      const ask = async (client: Deno.HttpClient, kind: Kind, i: number): Promise<Answer> => {
        const r = await fetch(`${base}${urls[kind](i)}`, { headers, client } as RequestInit);
        const body = new Uint8Array(await r.arrayBuffer());
        const inFlight = r.headers.get(IN_FLIGHT_HEADER);
        return {
          kind,
          status: r.status,
          retryAfter: r.headers.get("retry-after"),
          inFlight: inFlight === null ? null : Number(inFlight.split("/")[0]),
          bytes: kind === "report" && r.status === 200 ? body : null,
        };
      };
      const kinds = Object.keys(HEAVY_GATE_CAPACITY) as Kind[];
      const answers: Answer[] = [];
      const t0 = performance.now();
      const peaks: string[] = [];
      const burst = async (label: string, plan: [Kind, number][]) => {
        const client = Deno.createHttpClient({});
        burstPeak = status(child.pid).rss;
        try {
          answers.push(...await Promise.all(plan.map(([k, i]) => ask(client, k, i))));
        } finally {
          client.close();
        }
        peaks.push(`${label} ${(burstPeak - before.rss).toFixed(0)}`);
      };
      for (const kind of kinds) {
        await burst(kind, Array.from({ length: N }, (_, i) => [kind, i] as [Kind, number]));
      }
      await burst(
        "mixed",
        kinds.flatMap((k) => Array.from({ length: 40 }, (_, i) => [k, i] as [Kind, number])),
      );
      const burstMs = performance.now() - t0;
      clearInterval(sampler);
      const after = status(child.pid);
      const peak = Math.max(sampled, after.rss, hwmReset ? after.hwm : 0);
      const delta = peak - before.rss;

      const by = (k: Kind) => answers.filter((a) => a.kind === k);
      const maxIn = (k: Kind) => Math.max(0, ...by(k).map((a) => a.inFlight ?? 0));
      const ok = (k: Kind) => by(k).filter((a) => a.status === 200).length;
      const busy = answers.filter((a) => a.status === 429);
      const withRetry = busy.filter((a) => a.retryAfter !== null).length;
      const fivexx = answers.filter((a) => a.status >= 500).length;
      const other = answers.filter((a) => a.status !== 200 && a.status !== 429);
      const zip = answers.find((a) => a.bytes)!.bytes!;
      const entries = readZip(zip);
      const spineEntry = entries.find((e) => e.name === `${BIG_ID}/session.jsonl`);

      // The control: the old whole-spine detail read, uncapped, same burst size.
      const control = new Deno.Command(DENO, {
        args: [
          "run",
          "-A",
          "--quiet",
          `--v8-flags=${DAEMON_V8_FLAGS.join(",")}`,
          join(REPO_ROOT, "tests", "helpers", "rel_f4_control_child.ts"),
          big.dir,
          String(N),
          String(BOUND_MIB),
        ],
        stdout: "piped",
        stderr: "piped",
      });
      const c = await control.output();
      const ctl = JSON.parse(new TextDecoder().decode(c.stdout).trim().split("\n").pop()!) as {
        exceeded: boolean;
        deltaMiB: number;
        inFlight: number;
        started: number;
      };

      const perRoute = kinds.map((k) => `${k} ${maxIn(k)}/${HEAVY_GATE_CAPACITY[k]}`).join(", ");
      figure(
        "F4",
        `max in-flight per route: ${perRoute}; 429s: ${busy.length}/${answers.length} ` +
          `(Retry-After: ${withRetry}/${busy.length}); peak RSS delta: ${delta.toFixed(0)} MiB ` +
          `(bound ${BOUND_MIB} MiB); 5xx: ${fivexx}; control (uncapped whole-spine detail): ` +
          `+${ctl.deltaMiB} MiB with ${ctl.inFlight} of ${N} in flight — ` +
          `${ctl.exceeded ? "over the bound" : "within the bound"}`,
      );
      // deno-lint-ignore no-console
      console.log(
        `F4 detail: spine ${
          (big.bytes / MiB).toFixed(0)
        } MiB (${big.lines} lines), codex rollout ` +
          `${((await Deno.stat(codex.path)).size / MiB).toFixed(0)} MiB; 200s per route: ${
            kinds.map((k) => `${k} ${ok(k)}`).join(", ")
          }; bursts took ${(burstMs / 1000).toFixed(1)} s; RSS ${before.rss.toFixed(0)} → peak ${
            peak.toFixed(0)
          } MiB (VmHWM reset: ${
            hwmReset ? "yes" : "no"
          }; sampled peak per burst over the baseline, MiB: ${peaks.join(", ")}); report zip ${
            (zip.length / MiB).toFixed(1)
          } MiB, ${entries.length} entries`,
      );
      for (const k of kinds) {
        const unnamed = by(k).filter((a) => a.status === 200 && a.inFlight === null).length;
        assert.equal(unnamed, 0, `${k}: every admitted answer names its in-flight count`);
        assert.ok(maxIn(k) <= HEAVY_GATE_CAPACITY[k], `${k}: ${maxIn(k)} in flight`);
        assert.ok(ok(k) >= 1, `${k} answered at least once`);
        assert.ok(by(k).some((a) => a.status === 429), `${k}: a burst of ${N} met the cap`);
      }
      assert.deepEqual(other.map((a) => `${a.kind} ${a.status}`), [], "only 200 and 429");
      assert.equal(withRetry, busy.length, "every 429 says when to retry");
      assert.equal(fivexx, 0);
      assert.ok(delta <= BOUND_MIB, `RSS delta ${delta.toFixed(0)} MiB over ${BOUND_MIB} MiB`);
      assert.deepEqual(
        spineEntry?.data.length,
        big.bytes,
        "the streamed zip holds the whole spine",
      );
      assert.equal((await pythonZipTest(zip)).code, 0);
      assert.ok(ctl.exceeded, `control stayed within the bound: ${JSON.stringify(ctl)}`);
    } finally {
      try {
        child.kill("SIGTERM");
      } catch {
        // Already gone.
      }
      await child.status;
      await drain;
      if (out.includes("failed")) console.error(out.slice(-2000));
    }
  }));
