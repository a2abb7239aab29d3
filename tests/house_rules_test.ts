/**
 * House rules a linter cannot express: library code never reads the environment, argv,
 * cwd or home (only main.ts does), never prints to the console (it logs through an
 * injected logger), code outside a subsystem imports only its mod.ts, and no module
 * outside lib/durable opens files by hand (the one contained reader, reliability F1).
 */
import assert from "node:assert/strict";
import { join, relative } from "node:path";
import { REPO_ROOT } from "./helpers/temp.ts";
import { readersOutsideContained } from "./helpers/reader_scan.ts";

function* walk(dir: string): Generator<string> {
  for (const e of Deno.readDirSync(dir)) {
    const p = join(dir, e.name);
    if (e.isDirectory) yield* walk(p);
    else if (e.isFile && p.endsWith(".ts") && !p.endsWith("_test.ts")) yield p;
  }
}

const LIB = join(REPO_ROOT, "lib");

Deno.test("lib/ never reads env, argv, cwd or home directly", () => {
  const offenders: string[] = [];
  for (const f of walk(LIB)) {
    const text = Deno.readTextFileSync(f);
    if (/Deno\.(env|args|cwd)\b|os\.homedir\(|os\.tmpdir\(|process\.env/.test(text)) {
      offenders.push(relative(REPO_ROOT, f));
    }
  }
  assert.deepEqual(offenders, []);
});

Deno.test("lib/ never calls console directly", () => {
  const offenders: string[] = [];
  for (const f of walk(LIB)) {
    const lines = Deno.readTextFileSync(f).split("\n");
    lines.forEach((l, i) => {
      if (/^\s*console\.\w+\(/.test(l)) offenders.push(`${relative(REPO_ROOT, f)}:${i + 1}`);
    });
  }
  assert.deepEqual(offenders, []);
});

Deno.test("outside a subsystem, only its mod.ts is imported", () => {
  const offenders: string[] = [];
  const files = [...walk(LIB), join(REPO_ROOT, "main.ts")];
  for (const f of files) {
    const own = relative(LIB, f).split("/")[0];
    for (const m of Deno.readTextFileSync(f).matchAll(/from "(\.[^"]+)"/g)) {
      const target = relative(LIB, join(f, "..", m[1]!));
      const parts = target.split("/");
      if (parts.length < 2 || parts[0]!.startsWith("..")) continue;
      if (parts[0] !== own && parts.at(-1) !== "mod.ts") {
        offenders.push(`${relative(REPO_ROOT, f)} -> ${target}`);
      }
    }
  }
  assert.deepEqual(offenders, []);
});

Deno.test("outside lib/durable nothing opens files by hand: no O_NOFOLLOW, node:fs, Deno.open, fstat", () => {
  assert.deepEqual(readersOutsideContained(LIB), []);
});
