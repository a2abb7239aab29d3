/**
 * A search hit's snippet as one line of plain text, the form the CLI and the MCP server
 * print: the matches marked «…», whitespace collapsed, "…" where the message goes on
 * before or after the snippet, every piece made terminal-safe — and, unless the caller
 * shows the user's own text, masked with its highlight ranges moved onto the masked text
 * (maskWithRanges). Pieces are cleaned one by one AFTER the byte ranges are applied (they
 * index the raw or masked text), so a control sequence cut by a mark cannot swallow «».
 * `ranges` are UTF-8 byte offsets into the record text; `offset` is the snippet's.
 */
import { terminalSafe, utf8Length } from "../text/mod.ts";
import { maskWithRanges } from "./ranges.ts";
import { maskCutEdges } from "./cut_edges.ts";

/** How a snippet is printed. */
export interface MarkSnippetOptions {
  /** Where the snippet starts in the record text (> 0: "…" before it). */
  offset: number;
  ranges: readonly [number, number][];
  /** The message continues after the snippet ("…" after it). @default false */
  cutEnd?: boolean;
  /** Mask secrets (every surface but the owner's own CLI listing). */
  mask: boolean;
}

const enc = new TextEncoder();
const dec = new TextDecoder();

/** `snippet` with its matches marked, on one line (see the module header). */
export function markSnippet(snippet: string, o: MarkSnippetOptions): string {
  const len = utf8Length(snippet);
  const rel: [number, number][] = [];
  for (const [a, b] of o.ranges) {
    const s = Math.max(a - o.offset, 0), e = Math.min(b - o.offset, len);
    if (e > s) rel.push([s, e]);
  }
  // Masked, then a key cut by the snippet's window is masked as a fragment (cut_edges.ts).
  const m = o.mask
    ? maskCutEdges(maskWithRanges(snippet, rel).text, maskWithRanges(snippet, rel).ranges, {
      head: o.offset > 0,
      tail: o.cutEnd === true,
    })
    : { text: snippet, ranges: rel };
  const bytes = enc.encode(m.text);
  const piece = (from: number, to?: number) => terminalSafe(dec.decode(bytes.subarray(from, to)));
  let out = "";
  let at = 0;
  for (const [s, e] of m.ranges) {
    if (e <= s || s < at) continue;
    out += piece(at, s) + "«" + piece(s, Math.min(e, bytes.length)) + "»";
    at = e;
  }
  const line = (out + piece(at)).replace(/\s+/g, " ").trim();
  return `${o.offset > 0 ? "…" : ""}${line}${o.cutEnd ? "…" : ""}`;
}
