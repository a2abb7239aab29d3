/**
 * `intendant secrets` audits the transcript vault too (issue 29 follow-up), through the
 * real program on a real vault: a 40-day-old Claude Code session (outside the window, so
 * in no message index) that pasted an AWS-shaped key is kept by `intendant index`, then
 * deleted by its agent; the audit finds the key in the vault's copy, masked exactly like
 * an index finding, under that session with "in the vault" and the version and kept
 * time, and never prints it in full. A damaged object makes the audit incomplete and is
 * named, in --json and on the terminal.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { runIntendant } from "./helpers/cli.ts";
import { withTempDir } from "./helpers/temp.ts";
import { ARCHIVE_ENV } from "./helpers/archive_world.ts";
import { plantedKeys } from "./helpers/secret_keys.ts";
import { writeOldClaudeSession } from "./helpers/vault_only_world.ts";
import { maskedFindings } from "../lib/cli/secrets_audit.ts";

Deno.test("intendant secrets finds a key kept only in the vault, masked, with its version, and names a damaged object", () =>
  withTempDir(async (root) => {
    const env = ARCHIVE_ENV;
    const key = plantedKeys().find((k) => k.kind === "aws access key")!;
    const s = await writeOldClaudeSession(join(root, "home", ".claude"), {
      seed: "vault-secret",
      prompt: `Deploy with these: ${key.line}`,
      answer: "Done, the stack is up.",
    });
    assert.equal((await runIntendant(root, ["index"], { env })).code, 0);
    await Deno.remove(s.path); // its agent's cleanup

    const json = await runIntendant(root, ["secrets", "--json"], { env });
    assert.equal(json.code, 0, json.stderr);
    for (const out of [json.stdout, json.stderr]) assert.ok(!out.includes(key.secret));
    const a = JSON.parse(json.stdout);
    // Older than the window: the index holds no finding; the vault does.
    assert.equal(a.secrets_found, 0);
    assert.equal(a.complete, true);
    assert.equal(a.vault.complete, true);
    assert.equal(a.vault.secrets_found, 1);
    assert.deepEqual(a.vault.kinds, { "aws access key": 1 });
    const [session] = a.vault.sessions;
    assert.equal(session.session_key, s.key);
    assert.equal(session.gone, true);
    const [f] = session.findings;
    // Masked exactly as an index finding of the same text is.
    const expected = maskedFindings(`Deploy with these: ${key.line}`)[0]!;
    assert.equal(f.kind, "aws access key");
    assert.equal(f.masked, expected.masked);
    assert.equal(f.excerpt, expected.excerpt);
    assert.equal(f.file, s.path);
    assert.equal(f.line, 1);
    assert.equal(f.versions.length, 1);
    assert.equal(f.versions[0].version, 1);
    assert.equal(f.versions[0].last, true);
    assert.match(f.versions[0].kept, /^\d{4}-\d\d-\d\dT/);

    const human = await runIntendant(root, ["secrets"], { env });
    assert.equal(human.code, 0, human.stderr);
    for (const out of [human.stdout, human.stderr]) assert.ok(!out.includes(key.secret));
    assert.match(human.stdout, /^in the vault \(/m);
    assert.ok(human.stdout.includes(`${s.sessionId} (deleted by its agent: only in the vault)`));
    assert.ok(human.stdout.includes(`${s.path}:1 (version 1 kept `));
    assert.ok(human.stdout.includes(expected.masked));
    assert.match(human.stdout, /1 secret in 1 session kept in the vault/);

    // An object damaged on disk: named, and the audit is not complete.
    const objects = join(root, "state", "vault", "objects");
    for (const fan of Deno.readDirSync(objects)) {
      for (const o of Deno.readDirSync(join(objects, fan.name))) {
        const p = join(objects, fan.name, o.name);
        const bytes = Deno.readFileSync(p);
        bytes[bytes.length >> 1] = bytes[bytes.length >> 1]! ^ 0xff;
        Deno.writeFileSync(p, bytes);
      }
    }
    const broken = JSON.parse((await runIntendant(root, ["secrets", "--json"], { env })).stdout);
    assert.equal(broken.complete, false);
    assert.equal(broken.vault.complete, false);
    assert.deepEqual(
      broken.vault.unreadable.map((u: { session_key: string; version: number }) => [
        u.session_key,
        u.version,
      ]),
      [[s.key, 1]],
    );
    const text = (await runIntendant(root, ["secrets"], { env })).stdout;
    assert.ok(text.includes(`(vault not audited: ${s.key} ${s.path} version 1: `), text);
    assert.match(text, /that could be read; 1 could not/);
  }));
