import assert from "node:assert/strict";
import { InvalidInputError } from "../errors.ts";
import { machineName, resolveMachineName } from "./machine_name.ts";

Deno.test("machineName accepts 1-64 characters of A-Z a-z 0-9 . _ -", () => {
  for (const ok of ["a", "laptop-7", "ci_runner.3", "Host.Example.COM", "x".repeat(64)]) {
    assert.equal(machineName(ok), ok);
  }
});

Deno.test("machineName refuses empty, long, spaced, slashed, control and non-ASCII names", () => {
  const table: [string, RegExp][] = [
    ["", /Invalid machine name "" \(from INTENDANT_MACHINE\): expected 1-64 characters/],
    ["x".repeat(65), /Invalid machine name "x{65}"/],
    ["y".repeat(200), /"y{80}"…/],
    ["my laptop", /"my laptop"/],
    ["a/b", /"a\/b"/],
    ["a:b", /"a:b"/],
    ["tab\there", /"tab\\there"/],
    ["esc\x1b[31m", /"esc\\u001b\[31m"/],
    ["café", /"café"/],
  ];
  for (const [raw, re] of table) {
    assert.throws(() => machineName(raw), (e: unknown) => {
      assert.ok(e instanceof InvalidInputError);
      assert.match(e.message, re);
      // deno-lint-ignore no-control-regex
      assert.ok(!/[\x00-\x1f]/.test(e.message), "no raw control characters in the message");
      return true;
    });
  }
});

Deno.test("resolveMachineName prefers INTENDANT_MACHINE, falls back to the hostname, says what to set", () => {
  assert.equal(resolveMachineName({ configured: "ci-1", hostname: "box" }), "ci-1");
  assert.equal(resolveMachineName({ configured: null, hostname: "box.lan" }), "box.lan");
  assert.throws(
    () => resolveMachineName({ configured: null, hostname: "bad host" }),
    /"bad host" \(from hostname\).*set INTENDANT_MACHINE/,
  );
  assert.throws(
    () => resolveMachineName({ configured: "bad/name", hostname: "box" }),
    /"bad\/name" \(from INTENDANT_MACHINE\)/,
  );
  assert.throws(
    () => resolveMachineName({ configured: null, hostname: null }),
    /hostname is not readable here; set INTENDANT_MACHINE/,
  );
});

Deno.test("a bad name given as an argument is blamed on the argument, with an example", () => {
  assert.throws(
    () => machineName("my box", "argument"),
    (e: unknown) => {
      assert.ok(e instanceof Error);
      assert.doesNotMatch(e.message, /INTENDANT_MACHINE/);
      assert.match(e.message, /Invalid machine name "my box": expected 1-64 characters/);
      assert.match(e.message, /give a name like laptop-2/);
      return true;
    },
  );
});
