/**
 * Finds hand-made file opens outside the one contained reader (reliability-plan F1; the
 * house rule in tests/house_rules_test.ts). Outside lib/durable no module may, in code
 * (comments are stripped first):
 *  - use the open flags the reader owns (O_NOFOLLOW, O_NONBLOCK, O_NOCTTY);
 *  - import node:fs or node:fs/promises (the reader's own syscalls);
 *  - call Deno.open / Deno.openSync (an open that can follow a symlink or block on a FIFO);
 *  - fstat a handle (`fstat(…)`, `x.stat()`, `x.statSync()`): the second half of a private
 *    lstat + fstat dev/ino compare.
 * Heuristic by design: it reads source text, so it flags the shape, not the intent; a
 * legitimate new use belongs in lib/durable, behind the reader.
 */
import { join, relative } from "node:path";

const RULES: [string, RegExp][] = [
  ["open flag", /\bO_(NOFOLLOW|NONBLOCK|NOCTTY)\b/],
  ["node:fs import", /from\s+["']node:fs(\/promises)?["']|import\(\s*["']node:fs/],
  ["Deno.open", /\bDeno\.open(Sync)?\s*\(/],
  ["handle fstat", /\bfstat(Sync)?\s*\(|\.stat(Sync)?\(\s*\)/],
];

function stripComments(text: string): string {
  return text
    .replace(/\/\*[\s\S]*?\*\//g, (m) => m.replace(/[^\n]/g, " "))
    .replace(/(^|[\s;{}(),])\/\/.*$/gm, "$1");
}

/** The rule hits in one source text, as `line: rule`. */
export function scanSource(text: string): string[] {
  const out: string[] = [];
  stripComments(text).split("\n").forEach((l, i) => {
    for (const [name, re] of RULES) if (re.test(l)) out.push(`${i + 1}: ${name}`);
  });
  return out;
}

function* walk(dir: string): Generator<string> {
  for (const e of Deno.readDirSync(dir)) {
    const p = join(dir, e.name);
    if (e.isDirectory) yield* walk(p);
    else if (e.isFile && p.endsWith(".ts") && !p.endsWith("_test.ts")) yield p;
  }
}

/** Every hit under `libDir` outside `libDir/durable`, as `file:line: rule`. */
export function readersOutsideContained(libDir: string): string[] {
  const out: string[] = [];
  for (const f of walk(libDir)) {
    const rel = relative(libDir, f);
    if (rel.startsWith("durable/")) continue;
    for (const hit of scanSource(Deno.readTextFileSync(f))) out.push(`lib/${rel}:${hit}`);
  }
  return out.sort();
}
