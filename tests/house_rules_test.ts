/**
 * House rules a linter cannot express: library code never reads the environment, argv,
 * cwd or home (only main.ts does), never prints to the console (it logs through an
 * injected logger), code outside a subsystem imports only its mod.ts, and no module
 * outside lib/durable opens files by hand (the one contained reader, reliability F1).
 * And issue 17's structure of the extractors: lib/message_search/extract/ has no import
 * cycle, and a source's folder reaches outside itself only for the shared framework and
 * the record, locator, cursor and durable modules.
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

const EXTRACT = join(LIB, "message_search", "extract");

/** Relative import targets of one file, resolved to absolute paths. */
function importsOf(file: string): string[] {
  const out: string[] = [];
  for (const m of Deno.readTextFileSync(file).matchAll(/(?:from|import)\s+"(\.[^"]+)"/g)) {
    out.push(join(file, "..", m[1]!));
  }
  return out;
}

/** Test support (testing/ folders, `_`-prefixed helpers) is not part of the structure. */
function extractModules(): string[] {
  return [...walk(EXTRACT)].filter((f) =>
    !f.includes("/testing/") && !f.slice(f.lastIndexOf("/") + 1).startsWith("_")
  );
}

Deno.test("extract/ has no import cycle", () => {
  const files = new Set(extractModules());
  const edges = new Map([...files].map((f) => [f, importsOf(f).filter((t) => files.has(t))]));
  const state = new Map<string, "open" | "done">();
  const cycles: string[] = [];
  const visit = (f: string, path: string[]): void => {
    if (state.get(f) === "done") return;
    if (state.get(f) === "open") {
      const loop = [...path.slice(path.indexOf(f)), f];
      cycles.push(loop.map((p) => relative(EXTRACT, p)).join(" -> "));
      return;
    }
    state.set(f, "open");
    for (const t of edges.get(f)!) visit(t, [...path, f]);
    state.set(f, "done");
  };
  for (const f of files) visit(f, []);
  assert.deepEqual(cycles, []);
});

/**
 * What a source folder may import from outside itself. The Intendant source reads the
 * program's own session logs, so it also goes through session_log's and conversation's
 * doors (the native-era rules live in session_log, used by the extractor, the transcript
 * rebuild and the catalog's locate alike).
 */
const SOURCE_MAY_IMPORT = [
  "message_search/extract/framework/",
  "message_search/record.ts",
  "message_search/locator.ts",
  "message_search/cursor.ts",
  "message_search/cursor_types.ts",
  "durable/mod.ts",
];
const INTENDANT_MAY_IMPORT = ["session_log/mod.ts", "conversation/mod.ts"];

Deno.test("a source folder imports only the framework, record, locator, cursor and durable", () => {
  const offenders: string[] = [];
  for (const f of extractModules()) {
    const [folder, ...rest] = relative(EXTRACT, f).split("/");
    if (rest.length === 0 || folder === "framework") continue;
    const allowed = folder === "intendant"
      ? [...SOURCE_MAY_IMPORT, ...INTENDANT_MAY_IMPORT]
      : SOURCE_MAY_IMPORT;
    for (const t of importsOf(f)) {
      if (t.startsWith(join(EXTRACT, folder!) + "/")) continue;
      const rel = relative(LIB, t);
      if (!allowed.some((a) => a.endsWith("/") ? rel.startsWith(a) : rel === a)) {
        offenders.push(`${relative(REPO_ROOT, f)} -> lib/${rel}`);
      }
    }
  }
  assert.deepEqual(offenders, []);
});
