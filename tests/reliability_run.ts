/**
 * `deno task reliability`: runs every test that reports a reliability-plan figure (the
 * whole suite: figures live beside the behaviour they prove), collects the
 * `FIGURE <id>: <line>` lines, prints them as one table ordered by plan id, and writes
 * tests/RELIABILITY.md with the machine and the date. `--stress` runs the plan's full N
 * (INTENDANT_STRESS=1). Exits non-zero when any test failed or a plan id reported nothing.
 * `--from-log FILE` reads the output of a suite run that already happened instead (a
 * `.ci/run` log holds every FIGURE line: the suite is the same), so the table of a CI run
 * is written without running the ~20 minutes again; its duration is then the log's.
 */
import { join } from "node:path";

const ROOT = new URL("../", import.meta.url).pathname.replace(/\/$/, "");
const stress = Deno.args.includes("--stress");

function planOrder(id: string): number {
  return (id.charCodeAt(0) - 64) * 100 + Number(id.slice(1));
}

async function machine(): Promise<string> {
  const cpu =
    (await Deno.readTextFile("/proc/cpuinfo").catch(() => "")).match(/model name\s*:\s*(.+)/)
      ?.[1] ?? "unknown CPU";
  const mem = (await Deno.readTextFile("/proc/meminfo").catch(() => "")).match(/MemTotal:\s*(\d+)/)
    ?.[1];
  const cores = navigator.hardwareConcurrency;
  return `${cores} cores, ${cpu.trim()}, ${
    mem ? Math.round(Number(mem) / 1024 / 1024) + " GiB RAM" : "unknown RAM"
  }, Deno ${Deno.version.deno}`;
}

const started = Date.now();
const fromLog = Deno.args.includes("--from-log")
  ? Deno.args[Deno.args.indexOf("--from-log") + 1]
  : undefined;
let out = "";
let err = "";
let status: { success: boolean };
if (fromLog !== undefined) {
  out = await Deno.readTextFile(fromLog);
  status = { success: /^ok \| /m.test(out) && !/^FAILED \| /m.test(out) };
} else {
  const child = new Deno.Command(Deno.execPath(), {
    args: ["test", "-A", "--parallel"],
    cwd: ROOT,
    env: { NO_COLOR: "1", ...(stress ? { INTENDANT_STRESS: "1" } : {}) },
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  [out, err, status] = await Promise.all([
    new Response(child.stdout).text(),
    new Response(child.stderr).text(),
    child.status,
  ]);
}
const text = out + "\n" + err;
const figures = new Map<string, string[]>();
for (const m of text.matchAll(/FIGURE ([A-H]\d{1,2}): (.+)/g)) {
  const list = figures.get(m[1]!) ?? [];
  if (!list.includes(m[2]!.trim())) list.push(m[2]!.trim());
  figures.set(m[1]!, list);
}
const fuzz = [
  ...new Set(
    [...text.matchAll(/FUZZ ([^:\n]+): (.+)/g)].map((m) =>
      `| ${m[1]!.trim()} | ${m[2]!.trim().replaceAll("|", "\\|")} |`
    ),
  ),
];
const summary = text.match(/^(ok|FAILED) \| .+$/m)?.[0] ?? "no summary line";
// A failure must be diagnosable from this run alone: name the failed tests and keep the
// test runner's error section.
const failedTests = [...new Set([...text.matchAll(/^(.+?) \.\.\. FAILED/gm)].map((m) => m[1]!))];
if (failedTests.length > 0) {
  console.error(`FAILED tests:\n  ${failedTests.join("\n  ")}`);
  const errors = text.indexOf(" ERRORS ");
  if (errors >= 0) console.error(text.slice(errors, errors + 20_000));
}
const ids = [...figures.keys()].sort((a, b) => planOrder(a) - planOrder(b));
const rows = ids.flatMap((id) =>
  figures.get(id)!.map((line) => `| ${id} | ${line.replaceAll("|", "\\|")} |`)
);
const table = ["| id | figure |", "| --- | --- |", ...rows].join("\n");
console.log(
  ids.map((id) => figures.get(id)!.map((l) => `${id.padEnd(4)} ${l}`).join("\n")).join("\n"),
);
// Every id the plan lists (reliability-plan.md): a missing one is a gap, said out loud.
const PLAN: [string, number][] = [
  ["A", 17],
  // A17, B16, B17: the project's own (issue 29's vault, issue 28's file watch), described
  // in LOCAL_IDS below.
  ["B", 17],
  ["C", 4],
  ["D", 13],
  ["E", 2],
  ["F", 9],
  ["G", 2],
  ["H", 10],
];
/** Ids the project added after the plan, with what each proves (printed into the file). */
const LOCAL_IDS: [string, string][] = [
  [
    "A17",
    "vault writes: kill -9 before every file-system operation of a first sight, an append, a rewrite and a budget prune; every catalog whole (before or after), every named object present and verified, recovery converges to the uninterrupted result and restores byte for byte (tests/reliability_vault_crash_test.ts)",
  ],
  [
    "B16",
    "watched freshness: an append, a new file in a new directory, a rename into place, a truncation and a deletion are each answered correctly by ONE search sent 1 s after the change, with no sweep on the query path (tests/freshness_test.ts)",
  ],
  [
    "B17",
    "watch failure: a watch refused at the inotify limit, one failing mid-run and an overflow each hand over to polling or a full sweep at once, with the coverage note naming the limit (tests/freshness_test.ts)",
  ],
];
const missing = PLAN.flatMap(([l, n]) => Array.from({ length: n }, (_, i) => `${l}${i + 1}`))
  .filter((id) => !figures.has(id));
console.log(
  `\n${ids.length} plan items reported${
    missing.length ? `, MISSING: ${missing.join(" ")}` : ", none missing"
  }; tests: ${summary}`,
);
const md = `# Reliability figures

Produced by \`deno task reliability${stress ? " --stress" : ""}${
  fromLog !== undefined ? " --from-log" : ""
}\` on ${new Date().toISOString().slice(0, 10)}
(${await machine()}), in ${
  fromLog !== undefined
    ? `a suite run of ${summary.match(/\(([^)]*)\)\s*$/)?.[1] ?? "unknown length"} (a .ci/run log)`
    : `${Math.round((Date.now() - started) / 1000)} s`
}. N is ${
  stress
    ? "the plan's full N (INTENDANT_STRESS=1)"
    : "the moderate CI N; `deno task test:stress` runs the plan's full N"
}.
Each line is printed by the test that proves it (see /work/shared/reliability-plan.md for the
technique and pass criterion of each id). Test summary: \`${summary}\`. Plan ids without a
figure: ${missing.length ? missing.join(", ") : "none"}.

${table}

Ids the project added after the plan:

${LOCAL_IDS.map(([id, what]) => `- ${id}: ${what}`).join("\n")}

## Fuzzing (fast-check; 100,000 lines per extractor with --stress)

| target | result |
| --- | --- |
${fuzz.join("\n")}
`;
await Deno.writeTextFile(join(ROOT, "tests", "RELIABILITY.md"), md);
// Formatted like every other file in the repo, so `deno fmt --check` (CI) stays green.
await new Deno.Command(Deno.execPath(), { args: ["fmt", "tests/RELIABILITY.md"], cwd: ROOT })
  .output();
console.log(`wrote tests/RELIABILITY.md`);
// A gap in the plan fails the run like a failed test does.
Deno.exit(status.success && missing.length === 0 ? 0 : 1);
