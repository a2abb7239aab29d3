/**
 * Every skip word an extractor counts reaches the coverage table as a phrase (not the raw
 * code), and no phrase states a limit that some source does not have.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { skipReasonText } from "./skip_reasons.ts";

const EXTRACT = join(import.meta.dirname!, "..", "..", "lib", "message_search", "extract");

function* sources(dir: string): Generator<string> {
  for (const e of Deno.readDirSync(dir)) {
    const p = join(dir, e.name);
    if (e.isDirectory && e.name !== "testing") yield* sources(p);
    else if (e.isFile && p.endsWith(".ts") && !p.endsWith("_test.ts")) yield p;
  }
}

/** Skip words as the extractors spell them where they count them. */
function countedWords(): Map<string, string> {
  const out = new Map<string, string>();
  const patterns = [
    /countSkip\([^,()]+,\s*"([a-z0-9_]+)"/g,
    /\bcount\(\s*skipped,\s*"([a-z0-9_]+)"/g,
    /skipped\.([a-z0-9_]+)\s*=/g,
    /kind: "skip", reason: "([a-z0-9_]+)"/g,
  ];
  for (const f of sources(EXTRACT)) {
    const text = Deno.readTextFileSync(f);
    for (const re of patterns) {
      for (const m of text.matchAll(re)) out.set(m[1]!, f.slice(EXTRACT.length + 1));
    }
  }
  return out;
}

Deno.test("every skip word the extractors count has a phrase", () => {
  const words = countedWords();
  assert.ok(words.has("invalid_utf8") && words.has("oversized_line"), "the scan finds words");
  const missing = [...words].filter(([w]) => skipReasonText(w) === w.replaceAll("_", " "))
    .map(([w, f]) => `${w} (${f})`);
  assert.deepEqual(missing, []);
  assert.equal(skipReasonText("discovery:invalid_utf8"), "lines that are not UTF-8");
});

Deno.test("the oversized-line phrase names no size (sources cap lines at 16, 32 or 64 MiB)", () => {
  assert.doesNotMatch(skipReasonText("oversized_line"), /MiB/);
});
