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

Deno.test("reportError(): a refused permission check names the permission and the flag that grants it", () => {
  // Deno's own message, as a NotCapable from a permission check carries it.
  const sock = new Deno.errors.NotCapable(
    'Requires net access to "unix:/h/.intendant/run/http.sock", run again with the --allow-net flag',
  );
  let text = "";
  const code = reportError(sock, (s) => (text += s), "serve");
  assert.equal(code, EXIT_FAILURE);
  assert.equal(
    text,
    'intendant: Requires net access to "unix:/h/.intendant/run/http.sock"\n' +
      "hint: this process was started without that permission: add " +
      "--allow-net=unix:/h/.intendant/run/http.sock (or run `intendant serve --locked`, " +
      "which computes the exact profile)\n",
  );
  assert.doesNotMatch(text, /ownership/);
  // Found as the cause of another error too, with the command that ran.
  const wrapped = new Error("Cannot open the team database", {
    cause: new Deno.errors.NotCapable(
      'Requires env access to "PGSSLNEGOTIATION", run again with the --allow-env flag',
    ),
  });
  assert.match(
    report(wrapped).text,
    /^intendant: Cannot open the team database\nhint: .*add --allow-env=PGSSLNEGOTIATION \(or run `intendant search --locked`/,
  );
  // An operating-system refusal (EACCES) is not a missing flag: the ownership hint stays.
  const eacces = new Deno.errors.PermissionDenied(
    'Permission denied (os error 13): mkdir "/h/.intendant/run"',
  );
  const os = report(eacces);
  assert.equal(os.code, EXIT_FAILURE);
  assert.match(os.text, /hint: check ownership and permissions of the state root/);
});

Deno.test("reportError(): a busy port and a state root served by another daemon get their own fix, exit 6", () => {
  const port = Object.assign(new Deno.errors.AddrInUse("port 8765 on 127.0.0.1 is in use"), {
    busy: { kind: "port", host: "127.0.0.1", port: 8765 },
  });
  const p = report(port);
  assert.equal(p.code, EXIT_BUSY);
  assert.equal(
    p.text,
    "intendant: port 8765 on 127.0.0.1 is in use\nhint: pass --port N or set INTENDANT_PORT\n",
  );
  const home = Object.assign(
    new Deno.errors.AddrInUse(
      "another intendant daemon is serving this state root (pid 42, port 8765)",
    ),
    { busy: { kind: "state_root", pid: 42, port: 8765 } },
  );
  const h = report(home);
  assert.equal(h.code, EXIT_BUSY);
  assert.match(h.text, /^intendant: another intendant daemon is serving this state root \(pid 42/);
  assert.match(h.text, /\nhint: .*intendant url.*kill 42.*INTENDANT_HOME/);
  // Without a pid (daemon.json unreadable) the hint still says what to do.
  const unknown = Object.assign(new Deno.errors.AddrInUse("another intendant daemon …"), {
    busy: { kind: "state_root", pid: null, port: null },
  });
  assert.match(report(unknown).text, /\nhint: .*stop it, or point INTENDANT_HOME/);
  // A raw AddrInUse still says busy.
  assert.equal(report(new Deno.errors.AddrInUse("Address already in use")).code, EXIT_BUSY);
});
