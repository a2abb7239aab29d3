/**
 * Markdown blocks → a small tree: paragraphs, ATX and setext headings, fenced and
 * indented code, block quotes, bullet and ordered lists (nested through their items'
 * indentation, tight or loose), thematic breaks, and GFM pipe tables (a header row with a
 * pipe, a delimiter row of `---` cells with optional `:` alignment and the same number of
 * cells, then body rows until a blank line or another block; `\|` is a pipe inside a cell,
 * short rows are padded and long ones cut to the header's width, as GitHub does; a table
 * may interrupt a paragraph). Raw HTML blocks are not a thing here: such lines are
 * paragraph text. A CommonMark subset with its familiar edge rules (an unclosed fence
 * runs to the end; lazy continuation lines join an open paragraph; an ordered list
 * interrupts a paragraph only when it starts at 1).
 * Line classification uses anchored patterns with no nested quantifiers, or plain
 * scans; containers re-parse their de-indented lines, so the work is O(lines × depth)
 * with depth capped at BLOCK_DEPTH_MAX (deeper containers render as plain paragraph
 * text). A table is at most TABLE_COLS_MAX columns wide (a wider header is paragraph
 * text), and short rows are padded with at most TABLE_PAD_CELLS_MAX empty cells per parse
 * (later ones end in one spanning cell): padding every row to the header's width would
 * otherwise turn a long header over many one-character rows into a quadratic number of
 * cells. Pure; never throws.
 */
import { type Inline, parseInline } from "./md_inline.ts";

/** One block node. */
export type Block =
  | { t: "p"; c: Inline[] }
  | { t: "h"; level: number; c: Inline[] }
  | { t: "code"; lang: string; v: string }
  | { t: "quote"; c: Block[] }
  | { t: "list"; ordered: boolean; start: number; tight: boolean; items: Block[][] }
  | { t: "table"; align: Align[]; head: Inline[][]; rows: TableRow[] }
  | { t: "hr" };

/** A table column's alignment (null: none given). */
export type Align = "left" | "center" | "right" | null;

/**
 * A body row: its cells (cut to the header's width), then `fill` empty columns shown as
 * one spanning cell — only once TABLE_PAD_CELLS_MAX padding cells were spent on earlier
 * short rows (until then a short row is padded with real empty cells, as GitHub does).
 */
export interface TableRow {
  cells: Inline[][];
  fill: number;
}

/** Deepest nesting of quotes and list items that is parsed as such. */
export const BLOCK_DEPTH_MAX = 12;
/** Widest table parsed as one (see the module header). */
export const TABLE_COLS_MAX = 64;
/**
 * Empty cells one parse pads short rows with, at most; later short rows end in one
 * spanning cell. A 64-column header over thousands of one-character rows would otherwise
 * turn 2 characters into 64 cells each.
 */
export const TABLE_PAD_CELLS_MAX = 2048;

/** What one parse may still spend (see TABLE_PAD_CELLS_MAX). */
interface Budget {
  pad: number;
}

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

/**
 * The cells of a table row: split on unescaped pipes (`\|` is a pipe in the cell's text,
 * even inside a code span), one leading and one trailing pipe dropped, cells trimmed.
 */
export function rowCells(line: string): string[] {
  const s = line.trim();
  const out: string[] = [];
  let cell = "";
  let closed = false; // the last character read was a cell's closing pipe
  for (let i = s[0] === "|" ? 1 : 0; i < s.length; i++) {
    const c = s[i]!;
    closed = false;
    if (c === "\\" && s[i + 1] === "|") {
      cell += "|";
      i++;
    } else if (c === "\\" && i + 1 < s.length) {
      cell += c + s[++i]; // any other escape is the inline parser's
    } else if (c === "|") {
      out.push(cell.trim());
      cell = "";
      closed = true;
    } else cell += c;
  }
  if (!closed) out.push(cell.trim());
  return out;
}

/** True when `line` holds a pipe that separates cells (not escaped). */
function hasPipe(line: string): boolean {
  for (let i = 0; i < line.length; i++) {
    if (line[i] === "\\") i++;
    else if (line[i] === "|") return true;
  }
  return false;
}

/** The alignments of a delimiter row, or null when `line` is not one. */
function delimiterRow(line: string): Align[] | null {
  if (indentOf(line).cols > 3 || !hasPipe(line)) return null;
  const out: Align[] = [];
  for (const c of rowCells(line)) {
    if (!/^:?-+:?$/.test(c)) return null;
    const left = c[0] === ":", right = c.at(-1) === ":";
    out.push(left && right ? "center" : right ? "right" : left ? "left" : null);
  }
  return out;
}

/** The table whose header row is lines[i], or null (see the module header). */
function tableAt(lines: string[], i: number): { head: string[]; align: Align[] } | null {
  const line = lines[i]!;
  const next = lines[i + 1];
  if (next === undefined || indentOf(line).cols > 3 || !hasPipe(line)) return null;
  const align = delimiterRow(next);
  if (!align || align.length > TABLE_COLS_MAX) return null;
  const head = rowCells(line);
  return head.length === align.length ? { head, align } : null;
}

function table(
  lines: string[],
  i: number,
  t: { head: string[]; align: Align[] },
  out: Block[],
  budget: Budget,
): number {
  const width = t.align.length;
  const rows: TableRow[] = [];
  for (i += 2; i < lines.length && !blank(lines[i]!) && !interrupts(lines[i]!); i++) {
    const cells = rowCells(lines[i]!).slice(0, width).map(parseInline);
    const short = width - cells.length;
    const pad = short <= budget.pad ? short : 0;
    budget.pad -= pad;
    for (let k = 0; k < pad; k++) cells.push([]);
    rows.push({ cells, fill: short - pad });
  }
  out.push({ t: "table", align: t.align, head: t.head.map(parseInline), rows });
  return i;
}

/** Parses Markdown source into blocks. */
export function parseBlocks(src: string): Block[] {
  return blocks(src.replace(/\r\n?/g, "\n").split("\n"), 0, { pad: TABLE_PAD_CELLS_MAX });
}

function blocks(lines: string[], depth: number, budget: Budget): Block[] {
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
      i = quote(lines, i, depth, out, budget);
      continue;
    }
    const m = marker(line);
    if (m) {
      i = list(lines, i, m, depth, out, budget);
      continue;
    }
    const t = tableAt(lines, i);
    if (t) {
      i = table(lines, i, t, out, budget);
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
    if (interrupts(l) || tableAt(lines, i)) break;
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

function quote(lines: string[], i: number, depth: number, out: Block[], budget: Budget): number {
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
  out.push({
    t: "quote",
    c: depth >= BLOCK_DEPTH_MAX ? flat(inner) : blocks(inner, depth + 1, budget),
  });
  return i;
}

function list(
  lines: string[],
  i: number,
  first: Marker,
  depth: number,
  out: Block[],
  budget: Budget,
): number {
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
    items: items.map((it) => (depth >= BLOCK_DEPTH_MAX ? flat(it) : blocks(it, depth + 1, budget))),
  });
  return i;
}
