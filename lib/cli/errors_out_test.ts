import assert from "node:assert/strict";
import { StalePublishError } from "../errors.ts";
import { CursorExpiredError, InvalidCursorError } from "../message_search/mod.ts";
import { TeamDbError } from "../team/mod.ts";
import { reportError } from "./errors_out.ts";
import { EXIT_BUSY, EXIT_FAILURE, EXIT_INTERNAL, EXIT_USAGE } from "./exit_codes.ts";

function report(err: unknown): { code: number; text: string } {
  let text = "";
  const code = reportError(err, (s) => (text += s), "search");
  return { code, text };
}

Deno.test("reportError(): cursors are usage errors, lost races are busy, OS refusals are failures", () => {
  for (
    const err of [new InvalidCursorError("Cursor is malformed"), new CursorExpiredError("moved")]
  ) {
    const r = report(err);
    assert.equal(r.code, EXIT_USAGE);
    assert.equal(r.text.trimEnd().split("\n").length, 2, "one line and a hint");
  }
  assert.equal(report(new StalePublishError("lost")).code, EXIT_BUSY);
  // What Deno throws for a rename across devices: a plain Error carrying the errno name.
  const exdev = Object.assign(new Error("Invalid cross-device link (os error 18)"), {
    code: "EXDEV",
  });
  const r = report(exdev);
  assert.equal(r.code, EXIT_FAILURE);
  assert.match(r.text, /^intendant: Invalid cross-device link \(os error 18\)\nhint: .*EXDEV/);
  assert.doesNotMatch(r.text, /internal error|\bat /);
  // A real bug still says so, with its stack.
  assert.equal(report(new TypeError("x is not a function")).code, EXIT_INTERNAL);
});

Deno.test("reportError(): every team database failure is one line, a hint of its own and exit 1", () => {
  const kinds = [
    "connect",
    "tls",
    "auth",
    "database",
    "version",
    "ctype",
    "pg_trgm",
    "settings",
    "schema",
    "privilege",
  ] as const;
  const hints = new Set<string>();
  for (const kind of kinds) {
    const r = report(
      new TeamDbError(kind, `Cannot open team database postgres://u:***@h:5432/d: ${kind}\x1b[2J`),
    );
    assert.equal(r.code, EXIT_FAILURE, kind);
    const lines = r.text.trimEnd().split("\n");
    assert.equal(lines.length, 2, `${kind}: one line and a hint`);
    assert.match(lines[0]!, /^intendant: Cannot open team database postgres:\/\/u:\*\*\*@h/);
    assert.ok(!r.text.includes("\x1b"), "the message is terminal-safe");
    assert.match(lines[1]!, /^hint: \S/);
    assert.doesNotMatch(r.text, /internal error|intendant search --help/);
    hints.add(lines[1]!);
  }
  assert.equal(hints.size, kinds.length, "each kind has its own hint");
  assert.match(report(new TeamDbError("schema", "no schema")).text, /intendant team init/);
  assert.match(report(new TeamDbError("schema", "newer")).text, /upgraded intendant/);
});
