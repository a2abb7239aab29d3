import assert from "node:assert/strict";
import fc from "fast-check";
import {
  emptyWindow,
  pushWindow,
  reconcile,
  VANISH_WINDOW,
  type VanishWindow,
  type WindowEntry,
} from "./vanish_window.ts";

function windowOf(entries: readonly WindowEntry[]): VanishWindow {
  const w = emptyWindow();
  for (const e of entries) pushWindow(w, e);
  return w;
}

const entry = (i: number, gen = 0): WindowEntry => ({ id: `e${gen}-${i}`, text: `text ${i}` });

Deno.test("vanish window: a cut inside the window is exact; deeper or edited history restarts", () => {
  fc.assert(
    fc.property(
      fc.integer({ min: 0, max: 200 }),
      fc.integer({ min: 0, max: 200 }),
      fc.integer({ min: 0, max: 20 }),
      (n, cutSeed, added) => {
        const before = Array.from({ length: n }, (_, i) => entry(i));
        const cut = n === 0 ? 0 : cutSeed % (n + 1);
        const after = [
          ...before.slice(0, cut),
          ...Array.from({ length: added }, (_, i) => entry(i, 1)),
        ];
        const r = reconcile(windowOf(before), after);
        if (cut >= n - Math.min(n, VANISH_WINDOW)) {
          assert.equal(r.kind, "exact");
          if (r.kind === "exact") {
            assert.equal(r.keep, cut);
            assert.deepEqual(r.vanished, before.slice(cut).map((e) => e.id));
          }
        } else assert.equal(r.kind, "restart");
      },
    ),
  );
});

Deno.test("vanish window: changed text under a kept id, or a vanished id coming back, is not exact", () => {
  const before = Array.from({ length: 10 }, (_, i) => entry(i));
  const edited = before.map((e, i) => (i === 7 ? { ...e, text: "edited" } : e));
  // Entry 7 no longer matches, so 7..9 would vanish — yet their ids are still there.
  assert.deepEqual(reconcile(windowOf(before), edited), { kind: "restart", reason: "id_reused" });
  const many = Array.from({ length: 100 }, (_, i) => entry(i));
  const early = many.map((e, i) => (i === 3 ? { ...e, text: "edited" } : e));
  assert.deepEqual(reconcile(windowOf(many), early), {
    kind: "restart",
    reason: "history_changed",
  });
  assert.deepEqual(reconcile(windowOf(many), many), { kind: "exact", keep: 100, vanished: [] });
});
