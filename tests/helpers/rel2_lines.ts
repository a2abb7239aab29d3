/**
 * Hostile and valid lines in each tool's exact format, for the extractor reliability
 * tests (reliability-plan B4 and the extractor fuzz). Valid lines come from the fixture's
 * own `userLine` (one active user record each) and carry an ASCII marker `⟦<tag><i>⟧`,
 * so "indexed" is checked by finding the marker in the shard's record texts. Malformed
 * lines are built so that EVERY extractor counts each of them exactly once in the shard's
 * `skipped` (invalid JSON, a JSON value that is not an object, a discriminator of the
 * wrong type, or a field whose wrong type the extractor reports): the figure
 * "malformed counted" is then an exact equality, not a lower bound.
 */
import type { Source } from "../../lib/message_search/mod.ts";

const enc = new TextEncoder();
const BOM = "\ufeff";

/** Concatenates byte arrays. */
export function concatBytes(parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

/** The marker planted in valid line `i` (ASCII, so no normalization can hide it). */
export function marker(tag: string, i: number): string {
  return `[[${tag}${i}]]`;
}

/** Finds every marker of `tag` in `texts`. */
export function markersIn(tag: string, texts: Iterable<string>): Set<number> {
  const re = new RegExp(`\\[\\[${tag}(\\d+)\\]\\]`, "g");
  const found = new Set<number>();
  for (const t of texts) for (const m of t.matchAll(re)) found.add(Number(m[1]));
  return found;
}

/** Valid-line variants the extractors must still index (each tolerated by the splitter/decoder). */
export const VALID_VARIANTS = [
  "plain",
  "crlf",
  "bom",
  "lone_surrogate",
  "invalid_utf8_in_text",
  "big_text",
  "unicode",
] as const;
export type ValidVariant = (typeof VALID_VARIANTS)[number];

/**
 * One valid line (bytes, ending in "\n") for `userLine`, in variant `v`. `bigTextBytes`
 * sizes the big_text variant (kept under Kimi's 2 MiB record cap by the caller).
 */
export function validLine(
  userLine: (text: string, i: number) => string,
  tag: string,
  i: number,
  v: ValidVariant,
  bigTextBytes = 512 * 1024,
): Uint8Array {
  const m = marker(tag, i);
  switch (v) {
    case "plain":
      return enc.encode(userLine(`${m} plain line café 漢字 🧪`, i));
    case "crlf":
      return enc.encode(userLine(`${m} crlf line`, i).replace(/\n$/, "\r\n"));
    case "bom":
      // TextDecoder strips one leading BOM: the line parses.
      return enc.encode(BOM + userLine(`${m} bom line`, i));
    case "lone_surrogate":
      // JSON.stringify escapes it as \ud800: valid JSON, an ill-formed string.
      return enc.encode(userLine(`${m} lone \ud800 surrogate \udfff`, i));
    case "invalid_utf8_in_text": {
      // 0xFF 0xFE inside a string literal decode to U+FFFD: still valid JSON.
      const line = userLine(`${m} bad bytes @@BAD@@ after`, i);
      const [a, b] = line.split("@@BAD@@") as [string, string];
      return concatBytes([enc.encode(a), new Uint8Array([0xff, 0xfe, 0xc0, 0xae]), enc.encode(b)]);
    }
    case "big_text":
      return enc.encode(userLine(`${m} big ${"ü".repeat(bigTextBytes / 2)}`, i));
    case "unicode":
      return enc.encode(
        userLine(`${m} NUL\u0000 RTL\u202e e\u0301 \u2028 \uffff 𝔘 \\ " </script>`, i),
      );
  }
}

/** The key of the object a tool's valid line discriminates on, and wrong-typed variants. */
function wrongTypeVariants(source: Source, obj: Record<string, unknown>): unknown[] {
  const clone = () => structuredClone(obj) as Record<string, Record<string, unknown>>;
  const set = (f: (o: Record<string, Record<string, unknown>>) => void) => {
    const o = clone();
    f(o);
    return o;
  };
  const disc = source === "intendant" ? "event" : "type";
  const bad: unknown[] = [5, null, true, [], {}, ["user"], 1e308].map((v) =>
    set((o) => (o[disc] = v as never))
  );
  switch (source) {
    case "intendant":
      bad.push(
        set((o) => (o.ts = 5 as never)),
        set((o) => (o.ts_ms = "x" as never)),
        set((o) => (o.turn = -1 as never)),
        set((o) => (o.ts_ms = 1.5 as never)),
      );
      break;
    case "codex":
      bad.push(
        set((o) => (o.payload = 5 as never)),
        set((o) => (o.payload = [] as never)),
        set((o) => (o.payload!.message = 5)),
        set((o) => (o.payload!.message = null)),
      );
      break;
    case "claude-code":
      bad.push(
        set((o) => (o.uuid = 5 as never)), // no uuid: defect "no_uuid"
        set((o) => (o.timestamp = 5 as never)), // defect "bad_timestamp"
        set((o) => (o.timestamp = "not a date" as never)),
      );
      break;
    case "kimi":
      bad.push(
        set((o) => (o.message = 5 as never)), // malformed_record
        set((o) => (o.message = [] as never)),
        set((o) => (o.message = null as never)),
      );
      break;
    case "pi":
      bad.push(
        set((o) => (o.id = 5 as never)), // malformed_entry
        set((o) => (o.id = "" as never)),
        set((o) => (o.parentId = 5 as never)),
        set((o) => ((o.timestamp = 5 as never), (o.message!.timestamp = "x"))), // bad_timestamp
      );
      break;
  }
  return bad;
}

/** Options for {@link malformedLines}. */
export interface MalformedOptions {
  /** Lines to produce. @default 1000 */
  n?: number;
  /** Size of the huge-string lines. @default 10 MiB */
  hugeBytes?: number;
  /** How many huge-string lines. @default 5 */
  huge?: number;
  /** How many 100k-deep `[` lines. @default 10 */
  deep?: number;
}

/**
 * `n` malformed lines for `source` (each ending in "\n"), every one counted exactly once
 * by that source's extractor. `sample` is a valid line object of the format (wrong-type
 * variants are derived from it). Returns the lines and a histogram by category.
 */
export function malformedLines(
  source: Source,
  sample: Record<string, unknown>,
  o: MalformedOptions = {},
): { lines: Uint8Array[]; categories: Record<string, number> } {
  const { n = 1000, hugeBytes = 10 << 20, huge = 5, deep = 10 } = o;
  const categories: Record<string, number> = {};
  const lines: Uint8Array[] = [];
  const add = (cat: string, bytes: Uint8Array | string) => {
    const b = typeof bytes === "string" ? enc.encode(bytes) : bytes;
    lines.push(b[b.length - 1] === 0x0a ? b : concatBytes([b, enc.encode("\n")]));
    categories[cat] = (categories[cat] ?? 0) + 1;
  };
  const s = JSON.stringify(sample);
  // Heavy ones first (bounded count), then cycle through the light categories.
  for (let k = 0; k < huge; k++) {
    const body = "x".repeat(hugeBytes);
    add("huge_string", k % 2 === 0 ? `"${body}"` : `{"type":"user","message":"${body}`);
  }
  for (let k = 0; k < deep; k++) {
    const d = 100_000;
    add("deep_nesting", k % 2 === 0 ? "[".repeat(d) : "[".repeat(d) + "]".repeat(d));
  }
  const wrong = wrongTypeVariants(source, sample).map((v) => JSON.stringify(v));
  const light: [string, (k: number) => Uint8Array | string][] = [
    ["invalid_json", (k) =>
      [
        s.slice(0, Math.max(1, (k * 7) % s.length)),
        "{this is not json",
        `{"type":"user",}`,
        "{'single':'quotes'}",
        s.replace("{", "{,"),
        "NaN",
        s + "}",
        s + s,
        "undefined",
        `{"a":1 "b":2}`,
      ][k % 10]!],
    [
      "not_an_object",
      (k) =>
        ["42", '"just a string"', "null", "true", "[]", `[${s}]`, "-1e400", '"\\ud800"'][k % 8]!,
    ],
    ["wrong_type", (k) => wrong[k % wrong.length]!],
    ["bom", (k) => [BOM + "{broken", `{${BOM}` + s.slice(1), BOM + BOM + s][k % 3]!],
    [
      "crlf",
      (k) => [s.slice(0, s.length - 3) + "\r\n", s + "\r" + s + "\r\n", "\r{" + s + "\r\n"][k % 3]!,
    ],
    ["invalid_utf8", (k) =>
      [
        concatBytes([enc.encode('{"type":'), new Uint8Array([0xff, 0xfe]), enc.encode("}")]),
        concatBytes([new Uint8Array([0xc0, 0xae, 0xc0, 0xae]), enc.encode(s)]),
        // CESU-8 surrogate bytes where a key must start: U+FFFD breaks the syntax.
        concatBytes([
          enc.encode(s.slice(0, -1) + ","),
          new Uint8Array([0xed, 0xa0, 0x80]),
          enc
            .encode("}"),
        ]),
        new Uint8Array([0x80, 0x81, 0xfe, 0xff]),
      ][k % 4]!],
    [
      "lone_surrogate",
      (k) => ['{"type":"\\ud800', '"\\udc00"', '["\\ud800\\ud800"]', `{"\\ud800":` + s][k % 4]!,
    ],
    ["nul_bytes", (k) => ["\u0000" + s, s.slice(0, 5) + "\u0000" + s.slice(5)][k % 2]!],
  ];
  for (let k = 0; lines.length < n; k++) {
    const [cat, make] = light[k % light.length]!;
    add(cat, make(Math.floor(k / light.length)));
  }
  return { lines, categories };
}

/** Interleaves `valid` and `bad` lines (valid first, then spread evenly). */
export function interleave(valid: Uint8Array[], bad: Uint8Array[]): Uint8Array[] {
  const out: Uint8Array[] = [];
  const total = valid.length + bad.length;
  let v = 0, b = 0;
  for (let k = 0; k < total; k++) {
    // Bresenham-style: keep the valid share even along the file.
    const wantValid = Math.floor(((k + 1) * valid.length) / total) > v;
    if ((wantValid && v < valid.length) || b >= bad.length) out.push(valid[v++]!);
    else out.push(bad[b++]!);
  }
  return out;
}
