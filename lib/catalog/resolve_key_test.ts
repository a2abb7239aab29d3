import assert from "node:assert/strict";
import fsp from "node:fs/promises";
import { join } from "node:path";
import { AmbiguousPrefixError, InvalidInputError, NotFoundError } from "../errors.ts";
import { openStore } from "../message_search/mod.ts";
import { withTempDir } from "../../tests/helpers/temp.ts";
import { parseSessionKey, resolveSessionKey } from "./resolve_key.ts";
import { sessionDetail } from "./session_detail.ts";
import { sessionReportZip } from "./report_zip.ts";
import type { CatalogDeps } from "./types.ts";

/** reliability-plan D6: ids that must be refused before any file-system call. */
const HOSTILE_IDS = [
  "../../etc/passwd",
  "..%2F..%2Fetc%2Fpasswd",
  "%2e%2e%2f",
  "%252e%252e%252f",
  "..",
  ".",
  "./x",
  ".hidden",
  "a/b",
  "/etc/passwd",
  "a\\b",
  "..\\..\\windows",
  "a\0b",
  "\0",
  "%00",
  "x".repeat(10_000),
  "a".repeat(201),
  "-rf",
  "_x",
  "a..b",
  "...",
  "intendant:../x",
  "intendant:..",
  "intendant:a/b",
  "intendant:a.b",
  "codex:../../x",
  "codex:",
  "codex:a:b",
  "codex:.x",
  ":x",
  "nosuch:abc",
  "INTENDANT:abc",
  "file:///etc/passwd",
  "C:\\Windows",
  "ａｂｃ",
  "．．／",
  "abc∕def",
  "a b",
  "a\nb",
  "a\tb",
  "",
  "\u202eabc",
  "é",
  "%c0%ae%c0%ae%2f",
  "abc%",
  "abc?x=1",
  "abc#frag",
  "abc;rm",
  "$(id)",
  "`id`",
];

function spyFs(): { calls: string[]; restore(): void } {
  const calls: string[] = [];
  const d = Deno as unknown as Record<string, unknown>;
  const names = [
    "readDir",
    "readDirSync",
    "lstat",
    "lstatSync",
    "stat",
    "statSync",
    "open",
    "openSync",
    "readFile",
    "readFileSync",
    "readTextFile",
    "readTextFileSync",
    "realPath",
    "realPathSync",
  ];
  const saved = names.map((n) => [n, d[n]] as const);
  for (const [n, f] of saved) {
    d[n] = (...a: unknown[]) => {
      calls.push(`${n} ${String(a[0])}`);
      return (f as (...x: unknown[]) => unknown)(...a);
    };
  }
  const f = fsp as unknown as Record<string, unknown>;
  const open = f.open;
  f.open = (...a: unknown[]) => {
    calls.push(`fsp.open ${String(a[0])}`);
    return (open as (...x: unknown[]) => unknown)(...a);
  };
  return {
    calls,
    restore() {
      for (const [n, fn] of saved) d[n] = fn;
      f.open = open;
    },
  };
}

async function deps(root: string): Promise<CatalogDeps> {
  const store = await openStore({ root: join(root, "store"), parserVersion: 1, windowDays: null });
  return { logsDir: join(root, "logs"), store, namesPath: join(root, "names.json") };
}

Deno.test("hostile ids are refused by the grammar before any file-system call (D6)", () =>
  withTempDir(async (root) => {
    const d = await deps(root);
    Deno.mkdirSync(join(root, "logs"));
    let reached = 0;
    let refused = 0;
    for (const id of HOSTILE_IDS) {
      assert.throws(() => parseSessionKey(id), InvalidInputError, JSON.stringify(id.slice(0, 40)));
      const spy = spyFs();
      try {
        for (
          const call of [
            () => resolveSessionKey(d, id),
            () => sessionDetail(d, id, {}),
            () => sessionReportZip(d, id),
          ]
        ) {
          await assert.rejects(call, InvalidInputError);
          refused++;
        }
      } finally {
        spy.restore();
      }
      if (spy.calls.length > 0) reached++;
    }
    // Control: the spy does see the calls a grammatical id makes.
    const control = spyFs();
    try {
      await assert.rejects(() => resolveSessionKey(d, "abcd1234"), NotFoundError);
    } finally {
      control.restore();
    }
    assert.ok(control.calls.length > 0, "the spy observes file-system calls");
    // deno-lint-ignore no-console
    console.log(
      `ids: ${HOSTILE_IDS.length}, refusals: ${refused}, ids reaching fs without matching grammar: ${reached}`,
    );
    assert.equal(reached, 0);
    assert.ok(HOSTILE_IDS.length >= 50);
  }));

Deno.test("resolveSessionKey() finds native ids by full id or unique prefix, externals by key", () =>
  withTempDir(async (root) => {
    const d = await deps(root);
    for (const id of ["aaaa1111-x", "aaaa2222-y", "bbbb3333-z"]) {
      Deno.mkdirSync(join(root, "logs", id), { recursive: true });
    }
    // A symlinked "session" is not a session.
    Deno.symlinkSync(join(root, "logs", "bbbb3333-z"), join(root, "logs", "cccc4444-w"));
    assert.deepEqual(await resolveSessionKey(d, "bbbb"), {
      key: "intendant:bbbb3333-z",
      source: "intendant",
      session_id: "bbbb3333-z",
      dir: join(root, "logs", "bbbb3333-z"),
    });
    assert.equal((await resolveSessionKey(d, "intendant:aaaa1111-x")).session_id, "aaaa1111-x");
    await assert.rejects(() => resolveSessionKey(d, "aaaa"), AmbiguousPrefixError);
    await assert.rejects(() => resolveSessionKey(d, "cccc"), NotFoundError);
    await assert.rejects(() => resolveSessionKey(d, "codex:0190-abc"), NotFoundError);
    await d.store.publish([{
      kind: "replace",
      key: "codex:0190-abc",
      source: "codex",
      session_id: "0190-abc",
      base: null,
      segment: { records: [], marks: [] },
      cursors: {},
      state: null,
      source_watermark: 0,
      source_fingerprint: "x",
      meta: { project: null, title: null, parent_session_id: null, files: [] },
    }]);
    assert.equal((await resolveSessionKey(d, "codex:0190-abc")).source, "codex");
    // A bare external id works when it names exactly one session.
    assert.equal((await resolveSessionKey(d, "0190-abc")).key, "codex:0190-abc");
  }));
