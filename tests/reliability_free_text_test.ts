/**
 * Reliability-plan H2: keys in free text — titles, names, project paths and the resume
 * commands built from them — on every masked surface. Claude Code sessions are planted
 * whose first prompt holds a generated key of each kind at offsets that make the
 * producer's 100-code-point title cut fall inside the key (every visible length from 12
 * characters to the whole key), whose custom title (the session's name) holds a key, and
 * whose project directory holds one. Surfaces: `intendant secrets` (text and --json), the
 * MCP server's search_messages and list_sessions (the real server over stdio under its
 * locked profile), and the dashboard's and the Markdown export's title (ui/lib/masking.ts,
 * the bundle's own code). No 12-character piece of a key may appear on any of them.
 * Negative control: the same titles masked by the plain masker (no cut-edge check) show
 * pieces of the cut keys.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { runCli } from "../lib/cli/mod.ts";
import { maskSecrets } from "../lib/secrets/mod.ts";
import { ccUuid, ClaudeWriter } from "./fixtures/claude_fixture.ts";
import { figure } from "./helpers/figures.ts";
import { callTool, connectMcp } from "./helpers/mcp_client.ts";
import { plantedKeys } from "./helpers/secret_keys.ts";
import { fakeIo, withTempDir } from "./helpers/temp.ts";
import { buildWorld } from "./helpers/world.ts";
import { shownTitle } from "../ui/lib/masking.ts";
import { markdownFileName, sessionMarkdown } from "../ui/lib/markdown.ts";

/** Every 12-character piece of `key`. */
function pieces(key: string): string[] {
  const out: string[] = [];
  for (let i = 0; i + 12 <= key.length; i++) out.push(key.slice(i, i + 12));
  return out;
}

/** Kinds whose key stands alone (a provider prefix); the others need context to be a key. */
const SELF_NAMED =
  /^(?:sk-|gh[pousr]_|github_pat_|glpat-|AKIA|ASIA|xox|[rs]k_|AIza|GOCSPX-|npm_|hf_|SG\.|eyJ)/;

Deno.test("H2: keys in titles, names and project paths never show on a masked surface, cut or whole", () =>
  withTempDir(async (root) => {
    const w = await buildWorld(root);
    const keys = plantedKeys().filter((k) => SELF_NAMED.test(k.secret));
    const planted: { key: string; field: string }[] = [];
    const ccRoot = join(w.env.CLAUDE_CONFIG_DIR!, "projects");
    let t = Date.now() - 3_600_000;
    let n = 0;
    for (const k of keys) {
      // Visible lengths 12, 20, …, the whole key: the title cut lands inside the key.
      const visible = [12, 20, 31, Math.min(k.secret.length - 1, 95)];
      for (const v of visible) {
        const sid = ccUuid(`h2:${n++}`);
        // 100 - v characters of words, ending in a space (a key glued to a word is no key).
        const pad = (" x".repeat(Math.ceil((100 - v) / 2)) + " ").slice(-(100 - v));
        const project = n % 3 === 0 ? `/work/proj-${k.secret}` : "/work/proj";
        const cc = new ClaudeWriter({
          sessionId: sid,
          cwd: project,
          version: "2.1.150",
          clock: () => (t += 1000),
        });
        cc.user(`${pad}${k.secret} and then more words after it`, {}, null);
        cc.assistant([{ type: "text", text: "Noted, rotating it." }], `msg_h2${n}`);
        if (n % 4 === 0) {
          cc.meta({ type: "custom-title", customTitle: `deploy ${k.secret}`, sessionId: sid });
        }
        planted.push({ key: k.secret, field: project.includes(k.secret) ? "project" : "title" });
        const dir = join(ccRoot, `-h2-${n}`);
        Deno.mkdirSync(dir, { recursive: true });
        Deno.writeTextFileSync(join(dir, `${sid}.jsonl`), cc.text());
      }
    }
    await w.indexer.sweep();

    // The titles really were cut inside the keys (the scenario is what it claims).
    const list = await (await w.get("/api/sessions?limit=500")).json();
    const titles: string[] = list.sessions.map((s: { title: string | null }) => s.title ?? "");
    const cut = planted.filter((p) =>
      titles.some((ti) => ti.includes(p.key.slice(0, 12)) && !ti.includes(p.key))
    );
    assert.ok(cut.length >= keys.length * 2, `titles cut inside keys: ${cut.length}`);

    const outputs: [string, string][] = [];
    for (const args of [["secrets"], ["secrets", "--json"]]) {
      const io = fakeIo(w.env, root);
      const code = await runCli(args, io);
      assert.equal(code, 0, io.err.join(""));
      outputs.push([`intendant ${args.join(" ")}`, io.out.join("")]);
    }
    const { client } = await connectMcp(
      { PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin", ...w.env },
      [
        "--max-output-bytes=1000000",
      ],
    );
    try {
      const search = await callTool(client, "search_messages", { query: "rotating", limit: 100 });
      assert.equal(search.isError, false, search.text);
      outputs.push(["mcp search_messages", search.text]);
      const listed = await callTool(client, "list_sessions", { limit: 200 });
      assert.equal(listed.isError, false, listed.text);
      outputs.push(["mcp list_sessions", listed.text]);
    } finally {
      await client.close();
    }
    // The dashboard's own code on the same catalog rows: the card and header title, the
    // Markdown export's head and its file name.
    type Row = Parameters<typeof sessionMarkdown>[0];
    const rows: Row[] = list.sessions;
    outputs.push(["dashboard titles", rows.map((r) => shownTitle(r, true)).join("\n")]);
    outputs.push([
      "markdown export",
      rows.map((r) => sessionMarkdown(r, [], { total: 0 }) + markdownFileName(r)).join("\n"),
    ]);
    let leaked = 0;
    for (const [surface, text] of outputs) {
      for (const p of planted) {
        const leak = pieces(p.key).find((x) => text.includes(x));
        if (leak) leaked++;
        const at = leak ? text.indexOf(leak) : -1;
        assert.equal(
          leak,
          undefined,
          `${surface} shows a piece of a key in a ${p.field}: ${text.slice(at - 200, at + 60)}`,
        );
      }
    }
    // Negative control: the titles masked without the cut-edge check.
    const plain = titles.map((ti) => maskSecrets(ti).text).join("\n");
    const control = planted.filter((p) => pieces(p.key).some((x) => plain.includes(x))).length;
    assert.ok(control > 0, "the plain masker leaves cut keys showing");
    figure(
      "H2",
      `leaked pieces: ${leaked} over ${planted.length} planted keys (titles cut inside the key at ` +
        `12 characters to the whole key, names, project paths) × ${outputs.length} surfaces ` +
        `(${outputs.map(([s]) => s).join(", ")}), control (plain masker on the cut titles): ` +
        `${control} keys show a piece`,
    );
  }));
