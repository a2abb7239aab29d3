/**
 * Reliability-plan H3: keys the masker used to miss. Every generated key of every kind is
 * planted wrapped in terminal escapes (a real colour code, an OSC title, the same
 * JSON-escaped `\u001b[…m` as a transcript line holds it, `\x1b`, `\033`, `\e` spellings),
 * glued after `_`, and as URL passwords with no user or with `/` — then pushed through
 * every masked surface's masker: the one masker (dashboard export, MCP fields), a snippet
 * line (MCP, `search --team`), what a terminal shows after it (masked, then stripped), and
 * the report zip's streaming masker (bytes as latin1). No 12-character piece of a key may
 * survive on any surface. Negative control: the rules run on the raw text, as before
 * (escapes left in), then stripped for display — the keys come out whole.
 * False positives, measured: Python's standard library cut into 40-line chunks (the
 * machine's python3; this repository's own sources when there is none) — every span
 * found there is counted per 10,000 chunks and must stay under a bound.
 */
import assert from "node:assert/strict";
import { findSecrets, markSnippet, maskSecrets } from "../lib/secrets/mod.ts";
import { SECRET_RULES } from "../lib/secrets/rules.ts";
import { maskedPieces } from "../lib/catalog/report_mask.ts";
import { terminalSafe } from "../lib/text/mod.ts";
import { figure } from "./helpers/figures.ts";
import { plantedKeys, randomChars } from "./helpers/secret_keys.ts";
import { REPO_ROOT } from "./helpers/temp.ts";

const ESC = "\x1b";
/**
 * How a key is planted: each turns the planted line `l` (the key `k` with the context some
 * kinds need, `aws_secret_access_key=`, `password=`) into the text a transcript holds.
 */
const WRAPS: [string, (l: string, k: string) => string | null][] = [
  ["colour", (l) => `out: ${ESC}[32m${l}${ESC}[0m done`],
  ["bold+colour", (l) => `${ESC}[1m${ESC}[31m${l}${ESC}[0m`],
  ["osc title", (l) => `${ESC}]0;title${ESC}\\${l} `],
  ["json \\u001b", (l) => JSON.stringify(`out: ${ESC}[33m${l}${ESC}[0m`).slice(1, -1)],
  ["\\x1b text", (l) => `echo "\\x1b[32m${l}\\x1b[0m"`],
  ["\\033 text", (l) => `printf '\\033[1;32m${l}\\033[0m'`],
  ["\\e text", (l) => `echo -e "\\e[32m${l}\\e[0m"`],
  // A provider key glued after `_` (its prefix names it); a value after `Bearer `, `Basic `
  // or `password=` with `ID_` in front is another value, not this key glued.
  [
    "glued _",
    (
      l,
      k,
    ) => (/^(?:sk-|gh|github_pat_|glpat-|AKIA|ASIA|xox|[rs]k_|AIza|GOCSPX-|npm_|hf_|SG\.|eyJ)/.test(
        k,
      )
      ? l.replace(k, `ID_${k}`)
      : null),
  ],
  ["colour inside", (l, k) => l.replace(k, `${ESC}[1m${k.slice(0, 6)}${ESC}[0m${k.slice(6)}`)],
];

/** Twelve-character pieces of `key` (every offset): none may appear on a surface. */
function pieces(key: string): string[] {
  const out: string[] = [];
  for (let i = 0; i + 12 <= key.length; i++) out.push(key.slice(i, i + 12));
  return out;
}

/** Every masked surface's output for `text`. */
async function surfaces(text: string): Promise<[string, string][]> {
  const zip: string[] = [];
  const tally = { secrets: 0, kinds: {} };
  async function* one() {
    yield new TextEncoder().encode(text + "\n");
  }
  for await (const p of maskedPieces(one(), tally)) zip.push(new TextDecoder().decode(p));
  return [
    ["masker", maskSecrets(text).text],
    ["snippet line", markSnippet(text, { offset: 0, ranges: [], mask: true })],
    ["terminal", terminalSafe(maskSecrets(text).text)],
    ["report zip", zip.join("")],
  ];
}

/** The old path: rules on the raw text (escapes left in), then stripped for display. */
function rawRulesThenStripped(text: string): string {
  const spans: [number, number][] = [];
  for (const r of SECRET_RULES) {
    r.re.lastIndex = 0;
    for (const m of text.matchAll(r.re)) {
      const at = m.indices?.[r.group ?? 0];
      if (at && (!r.valid || r.valid(m[r.group ?? 0]!))) spans.push([at[0], at[1]]);
    }
  }
  spans.sort((a, b) => a[0] - b[0]);
  let out = "";
  let at = 0;
  for (const [s, e] of spans) {
    if (s < at) continue;
    out += text.slice(at, s) + "…[masked]";
    at = e;
  }
  return terminalSafe(out + text.slice(at));
}

Deno.test("H3: keys in escapes, glued after _, and URL passwords without a user or with / are masked on every surface", async () => {
  const ALNUM = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
  let probes = 0;
  let leaked = 0;
  let controlLeaked = 0;
  const rounds = 3;
  for (let round = 0; round < rounds; round++) {
    // A PEM block needs its own lines; every other kind rides in every wrap.
    for (const key of plantedKeys().filter((p) => p.kind !== "private key")) {
      for (const [name, wrap] of WRAPS) {
        const text = wrap(key.line, key.secret);
        if (text === null) continue;
        probes++;
        for (const [surface, out] of await surfaces(text)) {
          const leak = pieces(key.secret).find((p) => out.includes(p));
          if (leak) leaked++;
          assert.equal(
            leak,
            undefined,
            `${key.kind} / ${name} / ${surface}: ${JSON.stringify(out)}`,
          );
        }
        if (pieces(key.secret).some((p) => rawRulesThenStripped(text).includes(p))) {
          controlLeaked++;
        }
      }
    }
    // URL passwords: no user (Redis' form), a "/" inside, and both after an escape.
    const pw = randomChars(ALNUM, 18, ["a", "B", "7"]);
    const urls = [
      `redis://:${pw}@cache.internal:6379/0`,
      `mysql://root:${pw.slice(0, 9)}/${pw.slice(9)}@db.internal/shop`,
      `DATABASE_URL=${ESC}[36mpostgres://app:${pw}@db:5432/app${ESC}[0m`,
    ];
    for (const u of urls) {
      probes++;
      for (const [surface, out] of await surfaces(u)) {
        const shown = [pw, pw.slice(0, 9), pw.slice(9)].filter((p) => p.length >= 9);
        assert.ok(!shown.some((p) => out.includes(p)), `${surface}: ${out}`);
      }
    }
  }
  // Ports and paths are not passwords.
  assert.deepEqual(findSecrets("see http://example.com:8080/docs@v2 and https://h:443/a@b"), []);
  assert.ok(controlLeaked > 0, "the raw-text rules miss wrapped keys");

  const fp = await falsePositives();
  assert.ok(
    fp.per10k <= 3,
    `false positives per 10k chunks: ${fp.per10k.toFixed(1)} (${fp.hits} in ${fp.chunks}):\n${
      fp.samples.join("\n")
    }`,
  );
  figure(
    "H3",
    `leaked keys: ${leaked}/${probes} probes × 4 surfaces (${WRAPS.length} wraps × every kind, ` +
      `URL passwords without a user or with "/"), control (rules on the raw text, then ` +
      `stripped): ${controlLeaked} keys shown; false positives per 10k chunks of ordinary ` +
      `code: ${
        fp.per10k.toFixed(1)
      } (${fp.hits} spans in ${fp.chunks} 40-line chunks of ${fp.corpus})`,
  );
});

/** Spans found in ordinary code, per 10,000 40-line chunks. */
async function falsePositives(): Promise<
  { chunks: number; hits: number; per10k: number; corpus: string; samples: string[] }
> {
  let root: string | null = null;
  try {
    const out = await new Deno.Command("python3", {
      args: ["-c", "import sysconfig; print(sysconfig.get_paths()['stdlib'])"],
      stdout: "piped",
      stderr: "null",
    }).output();
    if (out.success) root = new TextDecoder().decode(out.stdout).trim() || null;
  } catch (err) {
    if (!(err instanceof Deno.errors.NotFound)) throw err;
  }
  const files: string[] = [];
  const walk = async (dir: string, ext: string) => {
    for await (const e of Deno.readDir(dir)) {
      const p = `${dir}/${e.name}`;
      // Third-party packages are not the standard library (and hold vendored data).
      if (e.isDirectory && !["site-packages", "node_modules", "gen", ".git"].includes(e.name)) {
        await walk(p, ext);
      } else if (e.isFile && e.name.endsWith(ext) && !e.name.endsWith("_test.ts")) files.push(p);
    }
  };
  let corpus: string;
  if (root) {
    await walk(root, ".py");
    corpus = "Python's standard library";
  } else {
    await walk(`${REPO_ROOT}/lib`, ".ts");
    corpus = "this repository's lib/";
  }
  files.sort();
  let chunks = 0;
  let hits = 0;
  const samples: string[] = [];
  for (const f of files) {
    const lines = (await Deno.readTextFile(f)).split("\n");
    for (let i = 0; i < lines.length; i += 40) {
      const c = lines.slice(i, i + 40).join("\n");
      chunks++;
      for (const s of findSecrets(c)) {
        hits++;
        if (samples.length < 20) {
          samples.push(`${s.rule}: ${JSON.stringify(c.slice(s.start - 30, s.end))}`);
        }
      }
    }
  }
  return { chunks, hits, per10k: (hits / Math.max(chunks, 1)) * 10_000, corpus, samples };
}
