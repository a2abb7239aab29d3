import assert from "node:assert/strict";
import { InvalidInputError } from "../errors.ts";
import { parseTeamUrl, type TeamUrl } from "./team_url.ts";

const SECRET = "s3cr3t/p@ss?w:rd";
const ENC = encodeURIComponent(SECRET);

function pick(u: TeamUrl) {
  return {
    host: u.host,
    port: u.port,
    database: u.database,
    user: u.user,
    password: u.password,
    passwordSource: u.passwordSource,
    sslmode: u.sslmode,
    redacted: u.redacted,
  };
}

Deno.test("parseTeamUrl accepts libpq's URI shapes with defaults and percent-decoding", () => {
  const table: [string, ReturnType<typeof pick>][] = [
    ["postgres://alice@db.example/team", {
      host: "db.example",
      port: 5432,
      database: "team",
      user: "alice",
      password: null,
      passwordSource: null,
      sslmode: "prefer",
      redacted: "postgres://alice@db.example:5432/team",
    }],
    [`postgresql://alice:${ENC}@db.example:6543/team?sslmode=verify-full`, {
      host: "db.example",
      port: 6543,
      database: "team",
      user: "alice",
      password: SECRET,
      passwordSource: "url",
      sslmode: "verify-full",
      redacted: "postgres://alice:***@db.example:6543/team?sslmode=verify-full",
    }],
    ["POSTGRES://al%20ice@[::1]:7000/t%C3%A9am", {
      host: "::1",
      port: 7000,
      database: "téam",
      user: "al ice",
      password: null,
      passwordSource: null,
      sslmode: "prefer",
      redacted: "postgres://al%20ice@[::1]:7000/t%C3%A9am",
    }],
    ["postgres://bob@10.0.0.7/team?sslmode=disable", {
      host: "10.0.0.7",
      port: 5432,
      database: "team",
      user: "bob",
      password: null,
      passwordSource: null,
      sslmode: "disable",
      redacted: "postgres://bob@10.0.0.7:5432/team?sslmode=disable",
    }],
  ];
  for (const [raw, want] of table) assert.deepEqual(pick(parseTeamUrl(raw)), want, raw);
  // An unescaped "@", "/", "?" or ":" in the password still splits at the last "@".
  const u = parseTeamUrl("postgres://alice:pa@ss/w?rd:x@h/db");
  assert.equal(u.password, "pa@ss/w?rd:x");
  assert.equal(u.host, "h");
  assert.equal(u.database, "db");
  for (const m of ["disable", "allow", "prefer", "require", "verify-ca", "verify-full"]) {
    assert.equal(parseTeamUrl(`postgres://a@h/d?sslmode=${m}`).sslmode, m);
  }
});

Deno.test("parseTeamUrl refuses each invalid kind with a clear InvalidInputError", () => {
  const table: [string, RegExp][] = [
    ["mysql://a@h/d", /scheme "mysql" is not supported; use postgres:\/\/ or postgresql:\/\//],
    ["db.example/team", /expected postgres:\/\/user@host\[:port\]\/database/],
    ["postgres://a@h", /no database/],
    ["postgres://a@h/", /no database/],
    ["postgres://a@h/?sslmode=require", /no database/],
    ["postgres://h/d", /no user/],
    ["postgres://a@/d", /unix-socket hosts are not supported: the locked profile grants network/],
    ["postgres://a@%2Fvar%2Frun%2Fpostgresql/d", /unix-socket hosts are not supported/],
    ["postgres://a@h/d?host=/var/run/postgresql", /unix-socket hosts are not supported/],
    ["postgres://a@h1,h2/d", /several hosts are not supported/],
    ["postgres://a@::1/d", /IPv6 host must be written in brackets/],
    ["postgres://a@[::1/d", /no closing "\]"/],
    ["postgres://a@[zz]/d", /host "zz" is not a host name or IP address/],
    ["postgres://a@h%20x/d", /host "h x" is not a host name/],
    ["postgres://a@h:0/d", /port "0" is not 1-65535/],
    ["postgres://a@h:65536/d", /port "65536" is not 1-65535/],
    ["postgres://a@h:5x/d", /port "5x" is not 1-65535/],
    [
      "postgres://a@h/d?sslmode=on",
      /sslmode "on" is not one of disable, allow, prefer, require, verify-ca, verify-full/,
    ],
    ["postgres://a@h/d?sslmode=require&sslmode=disable", /"sslmode" is given twice/],
    [
      "postgres://a@h/d?connect_timeout=5&application_name=x",
      /unsupported query parameters "connect_timeout", "application_name"; supported: "sslmode"/,
    ],
    ["postgres://a@h/d%ZZ", /database name has a malformed percent-escape/],
    ["postgres://a@h/d\n", /control character/],
  ];
  for (const [raw, re] of table) {
    assert.throws(() => parseTeamUrl(raw), (e: unknown) => {
      assert.ok(e instanceof InvalidInputError, `${raw}: ${e}`);
      assert.match(e.message, re, raw);
      assert.match(e.message, /^Invalid team URL|^[A-Z]/, raw);
      return true;
    });
  }
});

Deno.test("the password never appears in an error, in redacted, in JSON or in inspect", () => {
  const bad = [
    `postgres://alice:${ENC}@h/d?sslmode=maybe`,
    `postgres://alice:${ENC}@h:99999/d`,
    `postgres://alice:${ENC}@h/d?password=${ENC}`,
    `postgres://alice:${ENC}@h`,
    `postgres://alice:${ENC}%ZZ@h/d`,
    `postgres://alice:${SECRET}@/d`,
    `postgres://alice:${SECRET}@h1,h2/d`,
    `postgres://alice:${SECRET}@h/d?sslmode=x`,
    `ftp://alice:${SECRET}@h/d`,
  ];
  const fragments = [SECRET, ENC, "s3cr3t", "p@ss", "w:rd"];
  for (const raw of bad) {
    let message = "";
    try {
      parseTeamUrl(raw);
    } catch (e) {
      message = String(e) + ((e as Error).stack ?? "");
    }
    assert.ok(message !== "", `${raw} must be refused`);
    for (const f of fragments) assert.ok(!message.includes(f), `${raw}: ${message}`);
  }
  const ok = parseTeamUrl(`postgres://alice:${ENC}@h/d`);
  assert.equal(ok.password, SECRET);
  assert.equal(ok.redacted, "postgres://alice:***@h:5432/d");
  const shown = [ok.redacted, JSON.stringify(ok), Deno.inspect(ok), JSON.stringify({ ...ok })];
  for (const s of shown) for (const f of fragments) assert.ok(!s.includes(f), s);
  // The same holds for a password from PGPASSWORD or the password file.
  const env = parseTeamUrl("postgres://alice@h/d", { pgpassword: SECRET });
  assert.equal(env.passwordSource, "PGPASSWORD");
  for (const s of [env.redacted, JSON.stringify(env), Deno.inspect(env)]) {
    assert.ok(!s.includes(SECRET), s);
  }
});

Deno.test("the password comes from the URL, else PGPASSWORD, else the password file", () => {
  const pgpass = { path: "/h/.pgpass", text: "h:5432:d:alice:from-file\n", mode: 0o600 };
  const url = parseTeamUrl("postgres://alice:from-url@h/d", { pgpassword: "from-env", pgpass });
  assert.deepEqual([url.password, url.passwordSource], ["from-url", "url"]);
  const env = parseTeamUrl("postgres://alice@h/d", { pgpassword: "from-env", pgpass });
  assert.deepEqual([env.password, env.passwordSource], ["from-env", "PGPASSWORD"]);
  // Empty counts as none (libpq then asks the next source).
  const file = parseTeamUrl("postgres://alice:@h/d", { pgpassword: "", pgpass });
  assert.deepEqual([file.password, file.passwordSource], ["from-file", "pgpass"]);
  const none = parseTeamUrl("postgres://alice@h/other", { pgpass });
  assert.deepEqual([none.password, none.passwordSource], [null, null]);
  // A too-open file is ignored with libpq's warning, passed up for the caller to print.
  const open = parseTeamUrl("postgres://alice@h/d", { pgpass: { ...pgpass, mode: 0o644 } });
  assert.equal(open.password, null);
  assert.equal(open.warnings.length, 1);
  assert.match(open.warnings[0]!, /"\/h\/\.pgpass" has group or world access/);
  assert.ok(!open.warnings[0]!.includes("from-file"));
  // IPv6 hosts are looked up without brackets, escaped in the file.
  const v6 = parseTeamUrl("postgres://alice@[::1]:6000/d", {
    pgpass: { path: "/p", text: "\\:\\:1:6000:d:alice:v6pw\n", mode: 0o600 },
  });
  assert.equal(v6.password, "v6pw");
});
