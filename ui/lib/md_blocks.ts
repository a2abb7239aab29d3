/**
 * Markdown blocks → a small tree: paragraphs, ATX and setext headings, fenced and
 * indented code, block quotes, bullet and ordered lists (nested through their items'
 * indentation, tight or loose), thematic breaks. Raw HTML blocks are not a thing here:
 * such lines are paragraph text. A CommonMark subset with its familiar edge rules (an
 * unclosed fence runs to the end; lazy continuation lines join an open paragraph;
 * an ordered list interrupts a paragraph only when it starts at 1).
 * Line classification uses anchored patterns with no nested quantifiers, or plain
 * scans; containers re-parse their de-indented lines, so the work is O(lines × depth)
 * with depth capped at BLOCK_DEPTH_MAX (deeper containers render as plain paragraph
 * text). Pure; never throws.
 */
import { type Inline, parseInline } from "./md_inline.ts";

/** One block node. */
export type Block =
  | { t: "p"; c: Inline[] }
  | { t: "h"; level: number; c: Inline[] }
  | { t: "code"; lang: string; v: string }
  | { t: "quote"; c: Block[] }
  | { t: "list"; ordered: boolean; start: number; tight: boolean; items: Block[][] }
  | { t: "hr" };

/** Deepest nesting of quotes and list items that is parsed as such. */
export const BLOCK_DEPTH_MAX = 12;

/** Leading indentation in columns (tabs to the next multiple of 4) and its length in chars. */
function indentOf(line: string): { cols: number; chars: number } {
  let cols = 0, i = 0;
  for (; i < line.length; i++) {
    if (line[i] === " ") cols++;
    else if (line[i] === "\t") cols += 4 - (cols % 4);
    else break;
  }
  return { cols, chars: i };
}

/** `line` without its first `n` columns of indentation (a split tab leaves spaces). */
function dropCols(line: string, n: number): string {
  let cols = 0, i = 0;
  while (i < line.length && cols < n) {
    if (line[i] === " ") cols++;
    else if (line[i] === "\t") cols += 4 - (cols % 4);
    else break;
    i++;
  }
  return " ".repeat(Math.max(0, cols - n)) + line.slice(i);
}

const blank = (l: string) => l.trim() === "";
const FENCE = /^ {0,3}(`{3,}|~{3,})/;

function fence(line: string): { ch: string; n: number; indent: number; info: string } | null {
  const m = FENCE.exec(line);
  if (!m) return null;
  const info = line.slice(m[0].length).trim();
  if (m[1]![0] === "`" && info.includes("`")) return null;
  return { ch: m[1]![0]!, n: m[1]!.length, indent: m[0].length - m[1]!.length, info };
}

function heading(line: string): { level: number; text: string } | null {
  const { cols, chars } = indentOf(line);
  if (cols > 3 || line[chars] !== "#") return null;
  let i = chars;
  while (line[i] === "#") i++;
  const level = i - chars;
  if (level > 6 || (i < line.length && line[i] !== " " && line[i] !== "\t")) return null;
  let text = line.slice(i).trim();
  // A closing run of #s goes when it stands alone (after a space, or is everything).
  let k = text.length;
  while (k > 0 && text[k - 1] === "#") k--;
  if (k === 0 || text[k - 1] === " " || text[k - 1] === "\t") text = text.slice(0, k).trim();
  return { level, text };
}

function thematic(line: string): boolean {
  const { cols, chars } = indentOf(line);
  if (cols > 3) return false;
  const ch = line[chars];
  if (ch !== "-" && ch !== "*" && ch !== "_") return false;
  let n = 0;
  for (let i = chars; i < line.length; i++) {
    if (line[i] === ch) n++;
    else if (line[i] !== " " && line[i] !== "\t") return false;
  }
  return n >= 3;
}

interface Marker {
  ordered: boolean;
  /** The bullet character, or the ordered delimiter ("." or ")"). */
  ch: string;
  start: number;
  /** Columns from the line start to the item's content. */
  width: number;
  /** The first line's content (after the marker and its spaces). */
  first: string;
  empty: boolean;
}

const BULLET = /^ {0,3}[-+*](?=[ \t]|$)/;
const ORDERED = /^ {0,3}\d{1,9}[.)](?=[ \t]|$)/;

function marker(line: string): Marker | null {
  const m = BULLET.exec(line) ?? ORDERED.exec(line);
  if (!m) return null;
  const head = m[0];
  const ordered = /\d/.test(head);
  const rest = line.slice(head.length);
  const { cols } = indentOf(rest);
  const empty = blank(rest);
  // 1–4 spaces after the marker belong to it; more means indented code inside the item.
  const gap = empty || cols > 4 ? 1 : cols;
  return {
    ordered,
    ch: head.trim().slice(-1),
    start: ordered ? parseInt(head.trim(), 10) : 1,
    width: indentOf(head).cols + head.trim().length + gap,
    first: empty ? "" : cols > 4 ? dropCols(rest, 1) : rest.slice(indentOf(rest).chars),
    empty,
  };
}

/** True when `line` starts a block that ends an open paragraph. */
function interrupts(line: string): boolean {
  if (fence(line) || heading(line) || thematic(line) || /^ {0,3}>/.test(line)) return true;
  const m = marker(line);
  return m !== null && !m.empty && (!m.ordered || m.start === 1);
}

/** Parses Markdown source into blocks. */
export function parseBlocks(src: string): Block[] {
  return blocks(src.replace(/\r\n?/g, "\n").split("\n"), 0);
}

function blocks(lines: string[], depth: number): Block[] {
  const out: Block[] = [];
  let i = 0;
  while (i < lines.length) {
    const line = lines[i]!;
    if (blank(line)) {
      i++;
      continue;
    }
    const f = fence(line);
    if (f) {
      const body: string[] = [];
      for (i++; i < lines.length; i++) {
        const c = fence(lines[i]!);
        if (c && c.ch === f.ch && c.n >= f.n && c.info === "") {
          i++;
          break;
        }
        body.push(dropCols(lines[i]!, f.indent));
      }
      out.push({ t: "code", lang: f.info.split(/\s/)[0] ?? "", v: body.join("\n") });
      continue;
    }
    if (indentOf(line).cols >= 4) {
      const body: string[] = [];
      while (i < lines.length && (blank(lines[i]!) || indentOf(lines[i]!).cols >= 4)) {
        body.push(dropCols(lines[i++]!, 4));
      }
      while (body.length && blank(body.at(-1)!)) body.pop();
      out.push({ t: "code", lang: "", v: body.join("\n") });
      continue;
    }
    const h = heading(line);
    if (h) {
      out.push({ t: "h", level: h.level, c: parseInline(h.text) });
      i++;
      continue;
    }
    if (thematic(line)) {
      out.push({ t: "hr" });
      i++;
      continue;
    }
    if (/^ {0,3}>/.test(line)) {
      i = quote(lines, i, depth, out);
      continue;
    }
    const m = marker(line);
    if (m) {
      i = list(lines, i, m, depth, out);
      continue;
    }
    i = paragraph(lines, i, out);
  }
  return out;
}

function paragraph(lines: string[], i: number, out: Block[]): number {
  const text: string[] = [lines[i++]!.trim()];
  while (i < lines.length && !blank(lines[i]!)) {
    const l = lines[i]!;
    // A setext underline turns the paragraph into a heading (before "---" reads as a rule).
    if (/^ {0,3}(=+|-+)[ \t]*$/.test(l)) {
      out.push({ t: "h", level: l.trim()[0] === "=" ? 1 : 2, c: parseInline(text.join("\n")) });
      return i + 1;
    }
    if (interrupts(l)) break;
    text.push(l.trim());
    i++;
  }
  out.push({ t: "p", c: parseInline(text.join("\n")) });
  return i;
}

/** Deeper than BLOCK_DEPTH_MAX: the container's lines as one plain paragraph. */
function flat(lines: string[]): Block[] {
  return [{ t: "p", c: [{ t: "text", v: lines.join("\n").trim() }] }];
}

function quote(lines: string[], i: number, depth: number, out: Block[]): number {
  const inner: string[] = [];
  let lazyOk = false;
  while (i < lines.length) {
    const l = lines[i]!;
    const m = /^ {0,3}> ?/.exec(l);
    if (m) {
      const rest = l.slice(m[0].length);
      inner.push(rest);
      lazyOk = !blank(rest) && !fence(rest) && indentOf(rest).cols < 4;
    } else if (lazyOk && !blank(l) && !interrupts(l)) inner.push(l);
    else break;
    i++;
  }
  out.push({ t: "quote", c: depth >= BLOCK_DEPTH_MAX ? flat(inner) : blocks(inner, depth + 1) });
  return i;
}

function list(lines: string[], i: number, first: Marker, depth: number, out: Block[]): number {
  const items: string[][] = [];
  let loose = false;
  let m: Marker | null = first;
  while (m && i < lines.length) {
    const item = [m.first];
    const width = m.width;
    let lastBlank = m.empty;
    let content = !m.empty;
    for (i++; i < lines.length; i++) {
      const l = lines[i]!;
      if (blank(l)) {
        item.push("");
        lastBlank = true;
        continue;
      }
      if (indentOf(l).cols >= width) {
        if (lastBlank && content) loose = true;
        content = true;
        item.push(dropCols(l, width));
      } else if (!lastBlank && !interrupts(l) && !marker(l)) item.push(l.trim());
      else break;
      lastBlank = false;
    }
    while (item.length > 1 && blank(item.at(-1)!)) item.pop();
    items.push(item);
    const next: Marker | null = i < lines.length ? marker(lines[i]!) : null;
    const same = next && next.ordered === first.ordered && next.ch === first.ch;
    if (same && i > 0 && blank(lines[i - 1]!)) loose = true;
    m = same ? next : null;
  }
  out.push({
    t: "list",
    ordered: first.ordered,
    start: first.start,
    tight: !loose,
    items: items.map((it) => (depth >= BLOCK_DEPTH_MAX ? flat(it) : blocks(it, depth + 1))),
  });
  return i;
}
