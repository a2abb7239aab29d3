import assert from "node:assert/strict";
import { join } from "node:path";
import { resolveConfig } from "../config.ts";
import {
  createMessageIndex,
  decodeRecords,
  type MessageRecord,
  type SupersessionMark,
} from "../message_search/mod.ts";
import { buildCatalogWorld } from "../../tests/helpers/catalog_world.ts";
import { withTempDir } from "../../tests/helpers/temp.ts";
import { plantedKeys } from "../../tests/helpers/secret_keys.ts";
import { auditRecords, auditSecrets } from "./secrets_audit.ts";
import { formatAudit } from "./cmd_secrets.ts";

Deno.test("auditRecords() flags a secret in a rewound message as superseded and masks it", () =>
  withTempDir(async (root) => {
    const w = await buildCatalogWorld(root, { runner: false, natives: 0 });
    // A fixture session with a rewound (superseded) message, read from the real store.
    const [key, expected] = Object.entries(w.homes["codex"]!.expected)
      .find(([, rs]) => rs.some((r) => r.superseded && !r.subagent))!;
    const gone = expected.find((r) => r.superseded && !r.subagent)!;
    const kept = expected.find((r) => !r.superseded && !r.subagent)!;
    const e = (await w.store.readManifest()).sessions[key]!;
    const records: MessageRecord[] = [];
    const marks: SupersessionMark[] = [];
    for (const g of e.generations) {
      const view = await w.store.loadSegment(g);
      records.push(...decodeRecords(view));
      marks.push(...view.marks);
    }
    const [k1, k2] = [plantedKeys()[2]!, plantedKeys()[3]!];
    const withKeys = records.map((r) =>
      r.text === gone.text
        ? { ...r, text: `${r.text} ${k1.line}` }
        : r.text === kept.text
        ? { ...r, text: `${r.text} ${k2.line}` }
        : r
    );
    const found = auditRecords(withKeys, marks);
    const a = found.find((f) => f.kind === k1.kind)!;
    const b = found.find((f) => f.kind === k2.kind)!;
    assert.equal(a.superseded, true);
    assert.equal(b.superseded, false);
    for (const f of found) {
      assert.ok(!JSON.stringify(f).includes(k1.secret) && !JSON.stringify(f).includes(k2.secret));
    }
  }));

Deno.test("auditSecrets() names a damaged shard and never says 'no secrets found' for the whole index", () =>
  withTempDir(async (root) => {
    const w = await buildCatalogWorld(root, { runner: false, natives: 1 });
    const manifest = await w.store.readManifest();
    const [key, entry] = Object.entries(manifest.sessions)[0]!;
    const gen = join(resolveConfig(w.env, { cwd: root }).messageSearch.storeRoot, "generations");
    const file = join(gen, entry.generations[0]!);
    const bytes = Deno.readFileSync(file);
    bytes[bytes.length >> 1] = bytes[bytes.length >> 1]! ^ 0xff;
    Deno.writeFileSync(file, bytes);
    const { store } = await createMessageIndex(resolveConfig(w.env, { cwd: root }));
    const audit = await auditSecrets(store);
    assert.equal(audit.complete, false);
    assert.deepEqual(audit.unreadable.map((u) => u.session_key), [key]);
    assert.equal(audit.sessions_scanned, Object.keys(manifest.sessions).length - 1);
    const text = formatAudit(audit, () => null);
    assert.doesNotMatch(text, /^no secrets found in \d+ messages/m);
    assert.match(text, /that could be read; 1 could not/);
    assert.ok(text.includes(`(not audited: ${key}:`));
  }));
