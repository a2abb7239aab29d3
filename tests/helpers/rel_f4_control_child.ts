/**
 * F4 negative control, run as its own process with the daemon's V8 flags: the detail read
 * as it was before the spine index — the whole spine read at once (the contained read, up
 * to the old 256 MiB cap), every line parsed, every row built, then one page hydrated —
 * for a burst of `count` requests with no cap. Requests start one per event-loop turn;
 * before each start and after each step the process's VmRSS is compared with its
 * baseline, and the burst stops as soon as the delta passes `limitMiB` (so the control
 * proves the point without taking the machine's memory). Prints one JSON line:
 * {exceeded, deltaMiB, inFlight, started}.
 * Usage: rel_f4_control_child.ts <session dir> <count> <limitMiB>
 */
import { parseEvents } from "../../lib/session_log/mod.ts";
import { readInside } from "../../lib/catalog/mod.ts";
import { hydrateNative } from "../../lib/catalog/native_detail.ts";
import { applyCuts, buildNativeRows } from "../../lib/catalog/native_rows.ts";

const [dir, countArg, limitArg] = Deno.args;
const count = Number(countArg);
const limitMiB = Number(limitArg);
const OLD_SPINE_MAX_BYTES = 256 * 1024 * 1024;

function rssMiB(): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(Deno.readTextFileSync("/proc/self/status"));
  return Number(m![1]) / 1024;
}

const base = rssMiB();
let inFlight = 0, started = 0, maxDelta = 0;

function check(): void {
  const delta = rssMiB() - base;
  maxDelta = Math.max(maxDelta, delta);
  if (delta > limitMiB) {
    // deno-lint-ignore no-console
    console.log(JSON.stringify({ exceeded: true, deltaMiB: Math.round(delta), inFlight, started }));
    Deno.exit(0);
  }
}

async function oldDetail(): Promise<void> {
  inFlight++;
  try {
    const spine = await readInside(dir!, "session.jsonl", { maxBytes: OLD_SPINE_MAX_BYTES });
    check();
    if (!spine.ok) throw new Error(`spine refused: ${spine.reason}`);
    const { events } = parseEvents(spine.bytes);
    check();
    const rows = buildNativeRows(events, { createdAtMs: null, metaTask: null });
    applyCuts(rows);
    check();
    const mid = Math.floor(rows.length / 2);
    await hydrateNative(dir!, rows.slice(mid, mid + 200), mid);
    check();
  } finally {
    inFlight--;
  }
}

const all: Promise<void>[] = [];
for (let i = 0; i < count; i++) {
  check();
  started++;
  all.push(oldDetail());
  await new Promise((r) => setTimeout(r, 0));
}
await Promise.all(all);
// deno-lint-ignore no-console
console.log(JSON.stringify({ exceeded: false, deltaMiB: Math.round(maxDelta), inFlight, started }));
