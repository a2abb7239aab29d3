import assert from "node:assert/strict";
import { StalePublishError } from "../errors.ts";
import { CursorExpiredError, InvalidCursorError } from "../message_search/mod.ts";
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
