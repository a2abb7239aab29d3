/**
 * Deep Search over every source: a word that exists only in a Codex command's output and
 * one only in a Claude Code tool_result (neither in the message index) are found in the
 * agents' own files; after the agent deletes the transcript the word is still found, in
 * the vault's copy (marked from the vault); a secret in tool output comes back masked;
 * every page says what it read per source and what it did not scan; paging under a small
 * budget yields exactly the one-shot hits; a forged v2 cursor naming a path outside the
 * plan reads nothing.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { withTempDir } from "../../tests/helpers/temp.ts";
import { buildCatalogWorld, shardRecords } from "../../tests/helpers/catalog_world.ts";
import { Vault } from "../vault/mod.ts";
import { fold } from "../message_search/mod.ts";
import { deepSearch } from "./deep_search.ts";
import { encodeDeepCursor, needleFingerprint } from "./deep_cursor.ts";
import type { DeepHit } from "./types.ts";
import {
  CLAUDE_WORD,
  claudeToolResultLine,
  CODEX_WORD,
  codexOutputLine,
  SECRET,
} from "../../tests/helpers/deep_plants.ts";

async function everyPage(
  deps: Parameters<typeof deepSearch>[0],
  q: string,
  o: { limit?: number; maxBytes?: number } = {},
) {
  const hits: DeepHit[] = [];
  let cursor: string | null = null;
  let bytes = 0;
  do {
    const r: Awaited<ReturnType<typeof deepSearch>> = await deepSearch(deps, { q, cursor, ...o });
    hits.push(...r.hits);
    bytes += r.scanned.bytes;
    cursor = r.cursor;
  } while (cursor);
  return { hits, bytes };
}

Deno.test("deepSearch() finds words only in Codex command output and Claude tool_result, then in the vault's copy once deleted", () =>
  withTempDir(async (root) => {
    const w = await buildCatalogWorld(root, { runner: false, natives: 1 });
    const manifest = await w.store.readManifest();
    const entries = Object.entries(manifest.sessions);
    const codex = entries.find(([, e]) => e.source === "codex" && !e.source_gone)!;
    const claude = entries.find(([, e]) =>
      // One file: a subagent file of another session has a hard-linked twin that would
      // keep that session present after its files are removed.
      e.source === "claude-code" && e.meta.files.length === 1 && e.meta.files[0]!.endsWith(".jsonl")
    )!;
    const codexFile = codex[1].meta.files.find((f) => f.endsWith(".jsonl"))!;
    const claudeFile = claude[1].meta.files.find((f) => f.endsWith(".jsonl"))!;
    Deno.writeTextFileSync(codexFile, codexOutputLine(CODEX_WORD), { append: true });
    Deno.writeTextFileSync(
      claudeFile,
      claudeToolResultLine(CLAUDE_WORD, claude[1].session_id, claudeFile),
      {
        append: true,
      },
    );
    await w.indexer.sweep();
    for (const key of [codex[0], claude[0]]) {
      const text = (await shardRecords(w.store, key)).map((r) => r.text).join("\n");
      assert.ok(!text.includes(CODEX_WORD) && !text.includes(CLAUDE_WORD), "not in the index");
    }

    const c = await deepSearch(w.deps, { q: CODEX_WORD.toLowerCase() });
    assert.equal(c.cursor, null);
    assert.equal(c.scanned.complete, true);
    assert.deepEqual(c.hits.map((h) => [h.key, h.file, h.from]), [[
      codex[0],
      codexFile,
      undefined,
    ]]);
    const ch = c.hits[0]!;
    assert.equal(ch.source, "codex");
    assert.ok(ch.line! > 1, "a JSONL hit gives its line");
    assert.ok(!ch.snippet.includes(SECRET), "the secret in the output is masked");
    assert.ok(ch.snippet.includes(CODEX_WORD));
    const [a, b] = ch.ranges[0]!;
    const bytes = new TextEncoder().encode(ch.snippet);
    assert.equal(new TextDecoder().decode(bytes.subarray(a, b)), CODEX_WORD);
    // The page says what it read per source (this world holds no database source: the
    // CLI end-to-end test checks that those are named as not scanned).
    assert.ok(c.scanned.by_source.codex!.files >= 1);
    assert.ok(c.scanned.by_source["claude-code"]!.bytes > 0);
    assert.ok(c.scanned.by_source.intendant!.sessions >= 2, "both native sessions");
    assert.deepEqual(c.scanned.not_scanned, []);
    assert.deepEqual(c.scanned.skipped_files, {});
    assert.equal(c.progress.sessions_done, c.progress.sessions_total);

    const cl = await deepSearch(w.deps, { q: CLAUDE_WORD });
    assert.deepEqual(cl.hits.map((h) => [h.key, h.file]), [[claude[0], claudeFile]]);

    // Paging under a tight budget yields exactly the one-shot hits of a common word.
    const one = await everyPage(w.deps, "error", { limit: 1000 });
    assert.ok(one.hits.length > 2);
    const paged = await everyPage(w.deps, "error", { limit: 3, maxBytes: 64 * 1024 });
    assert.deepEqual(paged.hits, one.hits);

    // The agent deletes the transcript: the vault's copy is scanned instead.
    const vault = new Vault({ dir: join(root, "state", "vault-deep") });
    await vault.keep([{
      key: claude[0],
      source: "claude-code",
      sessionId: claude[1].session_id,
      files: claude[1].meta.files.map((path) => ({ path, role: "transcript" })),
    }]);
    for (const f of claude[1].meta.files) Deno.removeSync(f);
    await w.indexer.sweep();
    assert.equal((await w.store.readManifest()).sessions[claude[0]]!.source_gone, true);
    const withoutVault = await deepSearch(w.deps, { q: CLAUDE_WORD });
    assert.equal(withoutVault.hits.length, 0);
    assert.equal(withoutVault.scanned.gone_unkept >= 1, true, "says a gone session had no copy");
    const fromVault = await deepSearch({ ...w.deps, vault }, { q: CLAUDE_WORD });
    assert.deepEqual(fromVault.hits.map((h) => [h.key, h.file, h.from]), [[
      claude[0],
      claudeFile,
      "vault",
    ]]);
    assert.ok(fromVault.scanned.by_source["claude-code"]!.vault_bytes > 0);
    assert.deepEqual(fromVault.hits[0]!.line, cl.hits[0]!.line, "the same line as the original");
  }));

Deno.test("deepSearch() never opens the path a forged v2 cursor names", () =>
  withTempDir(async (root) => {
    const w = await buildCatalogWorld(root, { runner: false, natives: 1 });
    const canary = join(root, "outside.jsonl");
    Deno.writeTextFileSync(canary, "OUTSIDE-CANARY-99\n".repeat(10));
    const q = "OUTSIDE-CANARY-99";
    const forged = encodeDeepCursor({
      v: 2,
      q: needleFingerprint(fold(q)),
      c: Number.MAX_SAFE_INTEGER,
      k: "codex:forged-session",
      w: "file",
      f: canary,
      o: 0,
      n: 1,
      m: false,
    });
    const r = await everyPage(w.deps, q);
    assert.equal(r.hits.length, 0);
    const f = await deepSearch(w.deps, { q, cursor: forged });
    assert.equal(f.hits.length, 0, "the cursor's path is only an order key");
  }));
