import assert from "node:assert/strict";
import { chipSources, SOURCE_LIST } from "./sources.ts";

const cov = (sessions: Partial<Record<string, number>>) => ({
  sources: Object.fromEntries(Object.entries(sessions).map(([s, n]) => [s, { sessions: n! }])),
});

Deno.test("chipSources shows the sources with sessions, plus any pressed chip", () => {
  const c = cov({ intendant: 0, codex: 3, gemini: 2, goose: 0, pi: 0 });
  assert.deepEqual(chipSources(c, []), ["codex", "gemini"]);
  // A filter from the URL on a source without sessions stays visible (so it can be undone).
  assert.deepEqual(chipSources(c, ["goose"]), ["codex", "gemini", "goose"]);
});

Deno.test("chipSources shows every listed source for an empty index, and all before coverage answers", () => {
  assert.deepEqual(chipSources(cov({ intendant: 0, codex: 0, qwen: 0 }), []), [
    "intendant",
    "codex",
    "qwen",
  ]);
  assert.deepEqual(chipSources(null, []), SOURCE_LIST);
  assert.equal(SOURCE_LIST.length, 12);
});
