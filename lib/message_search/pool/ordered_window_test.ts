import assert from "node:assert/strict";
import { OrderedWindow, type Settled } from "./ordered_window.ts";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

Deno.test("OrderedWindow consumes in entry order whatever finishes first; failures are items", async () => {
  const seen: string[] = [];
  const w = new OrderedWindow<number, string>({
    maxItems: 8,
    maxWeight: Infinity,
    consume: (item: Settled<number>, ctx) => {
      seen.push(item.ok ? `${ctx}=${item.value}` : `${ctx}!${(item.error as Error).message}`);
    },
  });
  const delays = [30, 5, 20, 0, 10];
  for (const [i, d] of delays.entries()) {
    await w.push(async () => {
      await sleep(d);
      if (i === 2) throw new Error("boom");
      return i * 10;
    }, `u${i}`);
  }
  await w.drain();
  assert.deepEqual(seen, ["u0=0", "u1=10", "u2!boom", "u3=30", "u4=40"]);
});

Deno.test("OrderedWindow starts at most maxItems units of work behind a slow head", async () => {
  let running = 0;
  let started = 0;
  let maxOutstanding = 0;
  let consumed = 0;
  const w = new OrderedWindow<void, number>({
    maxItems: 3,
    maxWeight: Infinity,
    consume: () => void consumed++,
  });
  for (let i = 0; i < 12; i++) {
    await w.push(async () => {
      started++;
      running++;
      maxOutstanding = Math.max(maxOutstanding, started - consumed);
      await sleep(i === 0 ? 40 : 1);
      running--;
    }, i);
  }
  await w.drain();
  assert.equal(consumed, 12);
  assert.equal(running, 0);
  assert.ok(maxOutstanding <= 3, `outstanding ${maxOutstanding}`);
});

Deno.test("OrderedWindow stops admitting while finished results behind the head weigh maxWeight", async () => {
  let release!: () => void;
  const head = new Promise<number>((r) => release = () => r(0));
  const w = new OrderedWindow<number, number>({
    maxItems: 100,
    maxWeight: 10,
    weigh: (v) => v,
    consume: () => {},
  });
  await w.push(() => head, 0);
  await w.push(() => Promise.resolve(6), 1);
  await w.push(() => Promise.resolve(6), 2);
  await sleep(0);
  assert.equal(w.weight, 12);
  let admitted = false;
  const p = w.push(() => {
    admitted = true;
    return Promise.resolve(1);
  }, 3);
  await sleep(10);
  assert.equal(admitted, false, "blocked behind the unfinished head");
  release();
  await p;
  assert.equal(admitted, true);
  await w.drain();
  assert.equal(w.weight, 0);
});
