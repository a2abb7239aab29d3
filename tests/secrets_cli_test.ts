/**
 * `intendant secrets [--json]` through the real program (issue 18): a hermetic home with
 * sessions of every source, generated keys of every kind planted the way each tool writes
 * a user message, indexed by `intendant index`. The audit must list every planted key in
 * its session with its kind and a dashboard link that opens the message, and never print
 * a key in full (stdout and stderr are searched for every key). The index keeps the
 * original text: `intendant search` still finds a message by its key.
 * On the code before issue 18 `intendant secrets` was an unknown command (exit 2).
 */
import assert from "node:assert/strict";
import { buildAllFixtures } from "./fixtures/all.ts";
import type { AnyFixtureHome } from "./fixtures/types.ts";
import { runIntendant } from "./helpers/cli.ts";
import { hermeticEnv, withTempDir } from "./helpers/temp.ts";
import { type PlantedKey, plantedKeys } from "./helpers/secret_keys.ts";

function plant(home: AnyFixtureHome, text: string, n: number): void {
  const t = home.appendTarget;
  if (t.kind === "db") t.insertUser(text, 90 + n);
  else Deno.writeTextFileSync(t.path, t.userLine(text, 90 + n), { append: true });
}

interface Finding {
  kind: string;
  masked: string;
  excerpt: string;
  role: string;
  time: string;
  locator: string;
  link: string | null;
}
interface AuditJson {
  complete: boolean;
  sessions_scanned: number;
  messages_scanned: number;
  secrets_found: number;
  kinds: Record<string, number>;
  sessions: {
    session_key: string;
    source: string;
    kinds: Record<string, number>;
    findings: Finding[];
  }[];
  unreadable: unknown[];
}

Deno.test("intendant secrets finds every planted key of every kind, masked, with links, in every source", () =>
  withTempDir(async (root) => {
    const fixtures = await buildAllFixtures(root, { sources: "all" });
    const env = { ...hermeticEnv(root, fixtures.env), INTENDANT_PORT: "48123" };
    const homes = Object.values(fixtures.homes);
    const before = await runIntendant(root, ["index"], { env });
    assert.equal(before.code, 0, before.stderr);
    // The fixtures alone hold no secret: the audit says so only after reading everything.
    const clean = await runIntendant(root, ["secrets"], { env });
    assert.equal(clean.code, 0, clean.stderr);
    assert.match(clean.stdout, /^no secrets found in \d+ messages of \d+ sessions\n/);
    // The vault kept every transcript: audited too, and clean too (its own section).
    assert.match(
      clean.stdout,
      /\nno secrets found in the vault's \d+ kept versions of \d+ sessions\n$/,
    );

    // Every kind, spread over every source; a second round so each source gets several.
    const planted: { home: AnyFixtureHome; key: PlantedKey }[] = [];
    const keys = [...plantedKeys(), ...plantedKeys()];
    keys.forEach((key, i) => {
      const home = homes[i % homes.length]!;
      plant(home, `please keep this safe: ${key.line} (thanks)`, i);
      planted.push({ home, key });
    });
    const idx = await runIntendant(root, ["index"], { env });
    assert.equal(idx.code, 0, idx.stderr);

    const json = await runIntendant(root, ["secrets", "--json"], { env });
    const text = await runIntendant(root, ["secrets"], { env });
    for (const r of [json, text]) {
      assert.equal(r.code, 0, r.stderr);
      for (const { key } of planted) {
        assert.ok(!r.stdout.includes(key.secret), `${key.kind} printed in full`);
        assert.ok(!r.stderr.includes(key.secret), `${key.kind} printed in full on stderr`);
      }
    }
    const audit = JSON.parse(json.stdout) as AuditJson;
    assert.equal(audit.complete, true);
    assert.deepEqual(audit.unreadable, []);
    assert.equal(audit.secrets_found, planted.length);
    const wantKinds: Record<string, number> = {};
    for (const { key } of planted) wantKinds[key.kind] = (wantKinds[key.kind] ?? 0) + 1;
    assert.deepEqual(audit.kinds, wantKinds);
    for (const { home, key } of planted) {
      const s = audit.sessions.find((x) => x.session_key === home.appendTarget.key);
      assert.ok(s, `no session ${home.appendTarget.key} in the audit`);
      const f = s.findings.find((x) =>
        x.kind === key.kind && x.masked === maskedOf(key) && x.excerpt.includes(x.masked)
      );
      assert.ok(f, `${key.kind} (${maskedOf(key)}) not listed for ${home.source}`);
      assert.equal(f.role, "user");
      assert.equal(
        f.link,
        `http://127.0.0.1:48123/#/session/${encodeURIComponent(s.session_key)}?locate=${f.locator}`,
      );
    }
    assert.ok(audit.sessions.length >= homes.length);

    // Text output: grouped by session, each masked form and link on its lines.
    for (const s of audit.sessions) {
      assert.ok(text.stdout.includes(s.session_key.slice(s.source.length + 1)));
      for (const f of s.findings.slice(0, 20)) {
        assert.ok(text.stdout.includes(f.masked));
        assert.ok(text.stdout.includes(f.link!));
      }
    }
    assert.match(
      text.stdout,
      new RegExp(`${planted.length} secrets in ${audit.sessions.length} sessions \\(`),
    );

    // The index keeps the original text: a search by the key finds its message.
    const gh = planted.find((p) => p.key.kind === "github token")!;
    const found = await runIntendant(root, ["search", gh.key.secret, "--json"], { env });
    assert.equal(found.code, 0, found.stderr);
    const groups = (JSON.parse(found.stdout) as { groups: { session_key: string }[] }).groups;
    assert.ok(groups.some((g) => g.session_key === gh.home.appendTarget.key));
  }));

/** The masked form the audit must print for `key` (first 4 characters + kind). */
function maskedOf(key: PlantedKey): string {
  const keep = Math.min(4, Math.floor(key.secret.length / 3));
  return `${key.secret.slice(0, keep)}…[${key.kind}]`;
}
