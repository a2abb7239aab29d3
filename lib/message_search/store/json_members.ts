/**
 * The members of a JSON object as byte ranges of its UTF-8 text, without parsing the
 * values: lets the manifest reader parse one session entry at a time (each entry's slice
 * through JSON.parse on its own) instead of the whole snapshot at once, so reading a
 * manifest never holds the whole file as one decoded string plus every entry as objects
 * plus a validated copy (issue 16: that transient was ≈ 3× the resident manifest).
 *
 * Invariant: the scanner checks exactly the JSON grammar of what it does not hand out —
 * the braces, the keys (strings, decoded with JSON.parse), the colons, the commas and the
 * whitespace between them — and skips each value by its structure only (strings with
 * their escapes, nesting of objects and arrays, the characters of literals and numbers).
 * Whoever uses a value's range must JSON.parse it, which checks the rest; so a text is
 * accepted by scanner + per-value JSON.parse iff JSON.parse would accept it. A
 * malformed text throws SyntaxError, like JSON.parse.
 */

/** One member: the decoded key and the byte range [start, end) of its value. */
export interface JsonMember {
  key: string;
  start: number;
  end: number;
}

const WS = new Set([0x20, 0x09, 0x0a, 0x0d]);
const QUOTE = 0x22;
const BACKSLASH = 0x5c;

function ws(b: Uint8Array, i: number): number {
  while (i < b.length && WS.has(b[i]!)) i++;
  return i;
}

function fail(i: number, what: string): never {
  throw new SyntaxError(`Malformed JSON at byte ${i}: ${what}`);
}

/** End (exclusive) of the string starting at `i` (a quote). */
function skipString(b: Uint8Array, i: number): number {
  for (let j = i + 1; j < b.length; j++) {
    const c = b[j]!;
    if (c === BACKSLASH) j++;
    else if (c === QUOTE) return j + 1;
  }
  return fail(i, "unterminated string");
}

/** End (exclusive) of the value starting at `i` (no leading whitespace). */
export function skipValue(b: Uint8Array, i: number): number {
  const c = b[i];
  if (c === undefined) return fail(i, "value expected");
  if (c === QUOTE) return skipString(b, i);
  if (c === 0x7b || c === 0x5b) {
    let depth = 0;
    for (let j = i; j < b.length; j++) {
      const d = b[j]!;
      if (d === QUOTE) j = skipString(b, j) - 1;
      else if (d === 0x7b || d === 0x5b) depth++;
      else if (d === 0x7d || d === 0x5d) {
        if (--depth === 0) return j + 1;
      }
    }
    return fail(i, "unterminated object or array");
  }
  // A literal or a number: up to the next structural character or whitespace.
  let j = i;
  while (j < b.length) {
    const d = b[j]!;
    if (d === 0x2c || d === 0x7d || d === 0x5d || d === 0x3a || WS.has(d)) break;
    j++;
  }
  return j > i ? j : fail(i, "value expected");
}

/**
 * The members of the object whose `{` is at `start` (after optional whitespace), and the
 * offset just past its `}`.
 */
export function objectMembers(
  b: Uint8Array,
  start: number,
): { members: JsonMember[]; end: number } {
  const dec = new TextDecoder("utf-8", { fatal: true });
  let i = ws(b, start);
  if (b[i] !== 0x7b) fail(i, "object expected");
  i = ws(b, i + 1);
  const members: JsonMember[] = [];
  if (b[i] === 0x7d) return { members, end: i + 1 };
  for (;;) {
    if (b[i] !== QUOTE) fail(i, "key expected");
    const keyEnd = skipString(b, i);
    const key = JSON.parse(dec.decode(b.subarray(i, keyEnd))) as string;
    i = ws(b, keyEnd);
    if (b[i] !== 0x3a) fail(i, "colon expected");
    const vStart = ws(b, i + 1);
    const vEnd = skipValue(b, vStart);
    members.push({ key, start: vStart, end: vEnd });
    i = ws(b, vEnd);
    if (b[i] === 0x2c) {
      i = ws(b, i + 1);
      continue;
    }
    if (b[i] === 0x7d) return { members, end: i + 1 };
    fail(i, "comma or closing brace expected");
  }
}

/**
 * The members of the top-level object of `b` (after an optional byte order mark), checking
 * that nothing but whitespace follows it (JSON.parse's rule for a whole text).
 */
export function topLevelMembers(b: Uint8Array): JsonMember[] {
  // A UTF-8 byte order mark: TextDecoder drops it before a whole-text JSON.parse, so do we.
  const bom = b[0] === 0xef && b[1] === 0xbb && b[2] === 0xbf ? 3 : 0;
  const { members, end } = objectMembers(b, bom);
  if (ws(b, end) !== b.length) fail(end, "unexpected data after the object");
  return members;
}
