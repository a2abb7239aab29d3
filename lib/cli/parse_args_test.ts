import assert from "node:assert/strict";
import { parseArgs } from "./parse_args.ts";
import { InvalidInputError } from "../errors.ts";

const spec = {
  json: { type: "boolean" as const },
  limit: { type: "number" as const, short: "n" },
  source: { type: "string" as const, multiple: true },
  "log-file": { type: "string" as const },
};

Deno.test("parseArgs reads long, inline, short, repeated flags and positionals", () => {
  const r = parseArgs([
    "q1",
    "--json",
    "--limit=5",
    "--source",
    "codex",
    "--source=pi",
    "-n",
    "7",
    "--log-file",
    "d",
    "q2",
  ], spec);
  assert.deepEqual(r.positionals, ["q1", "q2"]);
  assert.equal(r.flags.json, true);
  assert.equal(r.flags.limit, 7);
  assert.deepEqual(r.flags.source, ["codex", "pi"]);
  assert.equal(r.flags["log-file"], "d");
});

Deno.test("parseArgs treats everything after -- as positional", () => {
  assert.deepEqual(parseArgs(["--", "--json", "-n"], spec).positionals, ["--json", "-n"]);
});

Deno.test("parseArgs rejects unknown flags, missing values and non-numbers, quoting them", () => {
  assert.throws(
    () => parseArgs(["--nope"], spec),
    (e) => e instanceof InvalidInputError && /"--nope"/.test(e.message),
  );
  assert.throws(() => parseArgs(["--limit"], spec), /"--limit" needs a value/);
  assert.throws(() => parseArgs(["--limit", "x"], spec), /needs a number, got "x"/);
  assert.throws(() => parseArgs(["--json=maybe"], spec), /takes no value/);
});
