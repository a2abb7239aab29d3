import assert from "node:assert/strict";
import { lookupPgpass, type PgpassFile } from "./pgpass.ts";

const Q = { host: "db.example", port: 5432, database: "team", user: "alice" };
const file = (text: string, mode: number | null = 0o600): PgpassFile => ({
  path: "/home/u/.pgpass",
  text,
  mode,
});

Deno.test("lookupPgpass matches fields exactly, with * wildcards, first match winning", () => {
  const table: [string, typeof Q, string | null][] = [
    ["db.example:5432:team:alice:pw1", Q, "pw1"],
    ["*:*:*:*:any", Q, "any"],
    ["db.example:*:team:alice:wild-port", { ...Q, port: 6000 }, "wild-port"],
    ["db.example:5432:team:bob:x", Q, null],
    ["db.example:5433:team:alice:x", Q, null],
    ["db.exampl:5432:team:alice:x", Q, null],
    ["db.example.org:5432:team:alice:x", Q, null],
    ["db.example:5432:team:alice", Q, null], // four fields: never matches
    ["# db.example:5432:team:alice:comment", Q, null],
    ["\n\ndb.example:5432:team:alice:after-blank\n", Q, "after-blank"],
    ["*:*:*:*:first\ndb.example:5432:team:alice:second", Q, "first"],
    ["db.example:5432:other:alice:no\ndb.example:5432:team:alice:yes", Q, "yes"],
    ["db.example:5432:team:alice:crlf\r\n", Q, "crlf"],
    // "*" is a wildcard only as a whole field; "\*" is a literal star.
    ["db*:5432:team:alice:x", Q, null],
    ["\\*:5432:team:alice:star", { ...Q, host: "*" }, "star"],
  ];
  for (const [text, q, want] of table) {
    assert.equal(lookupPgpass(file(text), q).password, want, text);
  }
});

Deno.test("lookupPgpass honours \\: and \\\\ escapes in fields and the password", () => {
  const t = (text: string, q = Q) => lookupPgpass(file(text), q).password;
  assert.equal(t("\\:\\:1:5432:team:alice:v6", { ...Q, host: "::1" }), "v6");
  assert.equal(
    t("db.example:5432:te\\:am:alice:colon-db", { ...Q, database: "te:am" }),
    "colon-db",
  );
  assert.equal(t("db.example:5432:team:al\\\\ice:bs-user", { ...Q, user: "al\\ice" }), "bs-user");
  // The password is de-escaped and ends at the next unescaped colon.
  assert.equal(t("db.example:5432:team:alice:p\\:w\\\\d"), "p:w\\d");
  assert.equal(t("db.example:5432:team:alice:pw:trailing"), "pw");
  // As in libpq (pwdfMatchesString), an unescaped colon ends a field only once the wanted
  // value is used up; before that it is compared like any character.
  assert.equal(t("db.example:5432:te:am:alice:raw", { ...Q, database: "te:am" }), "raw");
  assert.equal(t("db.example:5432:te:alice:x", { ...Q, database: "te:am" }), null);
  // A trailing backslash escapes nothing: the line has no closing colon and never matches.
  assert.equal(t("db.example:5432:team:alice\\"), null);
});

Deno.test("lookupPgpass ignores a group- or world-readable file with libpq's warning", () => {
  const line = "db.example:5432:team:alice:pw";
  for (const mode of [0o640, 0o604, 0o660, 0o100644, 0o610]) {
    const r = lookupPgpass(file(line, mode), Q);
    assert.equal(r.password, null, mode.toString(8));
    assert.deepEqual(r.warnings, [
      'WARNING: password file "/home/u/.pgpass" has group or world access; permissions should be u=rw (0600) or less',
    ]);
  }
  for (const mode of [0o600, 0o400, 0o100600, null]) {
    assert.deepEqual(lookupPgpass(file(line, mode), Q), { password: "pw", warnings: [] });
  }
  const dir = lookupPgpass({ ...file(line), isFile: false }, Q);
  assert.equal(dir.password, null);
  assert.match(dir.warnings[0]!, /is not a plain file/);
  assert.deepEqual(lookupPgpass(null, Q), { password: null, warnings: [] });
});
