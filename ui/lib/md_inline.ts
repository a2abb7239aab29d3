/**
 * Markdown inlines → a small tree (no HTML, no DOM): code spans, emphasis and strong
 * (`*`/`_`, CommonMark's delimiter-run rules without the rule of three), inline links
 * `[text](url "title")`, autolinks `<https://…>` and bare `http(s)://` URLs, backslash
 * escapes and line breaks. Raw HTML is never recognised: `<b>` stays the three
 * characters it is. Entities are not decoded either (`&lt;` shows as written).
 * Links: only http:, https: and mailto: become links; anything else (javascript:,
 * data:, relative paths) is left as the literal text it was written as.
 * Linear time on any input: code-span closers come from a per-length queue of backtick
 * runs, brackets are matched in one stack pass, emphasis uses CommonMark's openers
 * stack with a per-character search floor, URLs are scanned at most URL_MAX_CHARS, and
 * the tree is built iteratively with nesting capped at INLINE_DEPTH_MAX (deeper
 * emphasis renders flat). Pure; never throws.
 */

/** One inline node. */
export type Inline =
  | { t: "text"; v: string }
  | { t: "code"; v: string }
  | { t: "em" | "strong"; c: Inline[] }
  | { t: "link"; href: string; c: Inline[] };

/** Longest URL recognised; longer ones stay text. */
export const URL_MAX_CHARS = 2048;
/** Deepest emphasis/link nesting kept; deeper wrappers are dropped (text kept). */
export const INLINE_DEPTH_MAX = 24;

const PUNCT = /[\p{P}\p{S}]/u;
const SPACE = /\s/u;
const ESCAPABLE = /[!-/:-@[-`{-~]/;

/** Whitespace, with an ASCII fast path (this runs once per delimiter run). */
function isSpace(c: string): boolean {
  const k = c.charCodeAt(0);
  return k < 128 ? k === 32 || (k >= 9 && k <= 13) : SPACE.test(c);
}

/** ASCII or Unicode punctuation/symbol, with an ASCII fast path. */
function isPunct(c: string): boolean {
  const k = c.charCodeAt(0);
  if (k < 128) {
    return (k >= 33 && k <= 47) || (k >= 58 && k <= 64) || (k >= 91 && k <= 96) ||
      (k >= 123 && k <= 126);
  }
  return PUNCT.test(c);
}

/** The href for `raw` when it is an allowed absolute URL, else null. */
export function safeHref(raw: string): string | null {
  // deno-lint-ignore no-control-regex
  if (raw.length > URL_MAX_CHARS || /[\u0000-\u0020\u007f]/.test(raw)) return null;
  if (!/^(?:https?:\/\/|mailto:)/i.test(raw)) return null;
  try {
    const u = new URL(raw);
    return ["http:", "https:", "mailto:"].includes(u.protocol) ? u.href : null;
  } catch {
    return null; // not a URL at all: stays text
  }
}

interface Delim {
  t: "delim";
  ch: "*" | "_";
  n: number;
  left: number;
  open: boolean;
  close: boolean;
  pops: number[];
  pushes: number[];
}
type Tok =
  | { t: "text"; v: string }
  | { t: "code"; v: string }
  | Delim
  | { t: "lopen"; href: string }
  | { t: "lclose" };

/** For each backtick run start, the start of its closing run (same length), or -1. */
function codeCloser(s: string): Map<number, number> {
  const runs: [number, number][] = [];
  for (let i = 0; i < s.length;) {
    if (s[i] !== "`") {
      i++;
      continue;
    }
    let j = i;
    while (s[j] === "`") j++;
    runs.push([i, j - i]);
    i = j;
  }
  const byLen = new Map<number, number[]>();
  for (const [p, n] of runs) {
    const l = byLen.get(n);
    if (l) l.push(p);
    else byLen.set(n, [p]);
  }
  const ptr = new Map<number, number>();
  const out = new Map<number, number>();
  let floor = -1; // runs inside an accepted span are not openers
  for (const [p, n] of runs) {
    if (p < floor) continue;
    const list = byLen.get(n)!;
    let k = ptr.get(n) ?? 0;
    while (k < list.length && list[k]! <= p) k++;
    ptr.set(n, k);
    const c = k < list.length ? list[k]! : -1;
    out.set(p, c);
    if (c >= 0) floor = c + n;
  }
  return out;
}

/** Matching `]` for every live `[` (outside code spans, not escaped). */
function bracketPairs(s: string, code: Map<number, number>): Map<number, number> {
  const out = new Map<number, number>();
  const stack: number[] = [];
  for (let i = 0; i < s.length; i++) {
    const c = s[i];
    if (c === "\\") i++;
    else if (c === "`") {
      const close = code.get(i);
      let j = i;
      while (s[j] === "`") j++;
      i = close !== undefined && close >= 0 ? close + (j - i) - 1 : j - 1;
    } else if (c === "[") stack.push(i);
    else if (c === "]" && stack.length) out.set(stack.pop()!, i);
  }
  return out;
}

/**
 * The next index of one character at or after `i`, amortized O(1) when asked at
 * non-decreasing positions (every scan covers new ground), so searching for a closing
 * ">" or quote after each of 100 000 "<" stays linear.
 */
class NextOf {
  #at = -1;
  #from = Infinity;
  constructor(readonly s: string, readonly ch: string) {}
  from(i: number): number {
    if (i < this.#from || (this.#at >= 0 && this.#at < i)) {
      this.#at = this.s.indexOf(this.ch, i);
      this.#from = i;
    }
    return this.#at;
  }
}

/** Finders shared by one inline parse. */
interface Finders {
  gt: NextOf;
  dq: NextOf;
  sq: NextOf;
}

/** Deepest parenthesis nesting inside a link destination (CommonMark's limit). */
const DEST_PARENS_MAX = 32;

/** `(dest "title")` at `at` (the "("): the destination and the index after ")". */
function destination(s: string, at: number, f: Finders): { dest: string; end: number } | null {
  let i = at + 1;
  while (s[i] === " ") i++;
  let dest = "";
  if (s[i] === "<") {
    const close = f.gt.from(i);
    if (close < 0 || close - i > URL_MAX_CHARS) return null;
    dest = s.slice(i + 1, close);
    i = close + 1;
  } else {
    const start = i;
    let depth = 0;
    for (; i < s.length && i - start <= URL_MAX_CHARS; i++) {
      const c = s[i]!;
      if (c === "(" && ++depth > DEST_PARENS_MAX) return null;
      else if (c === ")" && depth-- === 0) break;
      else if (c === " " || c === "\n" || c === "\t") break;
    }
    dest = s.slice(start, i);
  }
  while (s[i] === " " || s[i] === "\n") i++;
  const q = s[i];
  if (q === '"' || q === "'") {
    const close = (q === '"' ? f.dq : f.sq).from(i + 1);
    if (close < 0 || close - i > URL_MAX_CHARS) return null;
    i = close + 1;
    while (s[i] === " ") i++;
  }
  return s[i] === ")" ? { dest: dest.replace(/\\([!-/:-@[-`{-~])/g, "$1"), end: i + 1 } : null;
}

/** A bare URL starting at `i` (already known to start with http:// or https://). */
function bareUrl(s: string, i: number): string {
  let j = i;
  while (j < s.length && j - i < URL_MAX_CHARS && !/[\s<>"`]/.test(s[j]!)) j++;
  // Trailing punctuation ends the sentence, not the URL; a ")" only when unbalanced.
  let open = 0;
  for (let k = i; k < j; k++) open += s[k] === "(" ? 1 : s[k] === ")" ? -1 : 0;
  for (; j > i; j--) {
    const last = s[j - 1]!;
    if (".,:;!?'*_".includes(last)) continue;
    if (last === ")" && open < 0) {
      open++;
      continue;
    }
    break;
  }
  return s.slice(i, j);
}

function delimRun(s: string, i: number): Delim {
  const ch = s[i] as "*" | "_";
  let j = i;
  while (s[j] === ch) j++;
  const before = i > 0 ? s[i - 1]! : " ";
  const after = j < s.length ? s[j]! : " ";
  const sb = isSpace(before), sa = isSpace(after);
  const pb = isPunct(before), pa = isPunct(after);
  const leftF = !sa && (!pa || sb || pb);
  const rightF = !sb && (!pb || sa || pa);
  const open = ch === "*" ? leftF : leftF && (!rightF || pb);
  const close = ch === "*" ? rightF : rightF && (!leftF || pa);
  return { t: "delim", ch, n: j - i, left: j - i, open, close, pops: [], pushes: [] };
}

/** One left-to-right scan into tokens (see the module header for what is recognised). */
function tokenize(s: string): Tok[] {
  const code = codeCloser(s);
  const pairs = bracketPairs(s, code);
  const f: Finders = { gt: new NextOf(s, ">"), dq: new NextOf(s, '"'), sq: new NextOf(s, "'") };
  const toks: Tok[] = [];
  let buf = "";
  const flush = () => {
    if (buf) toks.push({ t: "text", v: buf });
    buf = "";
  };
  // Where the open link's label ends (its "]"), and where its ")" ends.
  let linkClose = -1, linkEnd = -1;
  for (let i = 0; i < s.length;) {
    const c = s[i]!;
    if (i === linkClose) {
      flush();
      toks.push({ t: "lclose" });
      i = linkEnd;
      linkClose = linkEnd = -1;
      continue;
    }
    if (c === "\\" && i + 1 < s.length && ESCAPABLE.test(s[i + 1]!)) {
      buf += s[i + 1];
      i += 2;
    } else if (c === "`") {
      let j = i;
      while (s[j] === "`") j++;
      const close = code.get(i) ?? -1;
      if (close < 0 || (linkClose >= 0 && close > linkClose)) {
        buf += s.slice(i, j);
        i = j;
        continue;
      }
      let v = s.slice(j, close).replaceAll("\n", " ");
      if (v.length > 2 && v[0] === " " && v.at(-1) === " " && v.trim()) v = v.slice(1, -1);
      flush();
      toks.push({ t: "code", v });
      i = close + (j - i);
    } else if (c === "*" || c === "_") {
      flush();
      const d = delimRun(s, i);
      toks.push(d);
      i += d.n;
    } else if (c === "[" && linkClose < 0 && s[(pairs.get(i) ?? -2) + 1] === "(") {
      const close = pairs.get(i)!;
      const d = destination(s, close + 1, f);
      const href = d && safeHref(d.dest);
      if (!d || !href) {
        buf += c;
        i++;
        continue;
      }
      flush();
      toks.push({ t: "lopen", href });
      linkClose = close;
      linkEnd = d.end;
      i++;
    } else if (c === "<" && linkClose < 0) {
      const close = f.gt.from(i);
      const href = close > i && close - i <= URL_MAX_CHARS ? safeHref(s.slice(i + 1, close)) : null;
      if (!href) {
        buf += c;
        i++;
        continue;
      }
      flush();
      toks.push({ t: "lopen", href }, { t: "text", v: s.slice(i + 1, close) }, { t: "lclose" });
      i = close + 1;
    } else if (
      c === "h" && linkClose < 0 && (i === 0 || /[\s(*_~"']/.test(s[i - 1]!)) &&
      (s.startsWith("http://", i) || s.startsWith("https://", i))
    ) {
      const url = bareUrl(s, i);
      const href = url.length > 8 ? safeHref(url) : null;
      if (!href) {
        buf += c;
        i++;
        continue;
      }
      flush();
      toks.push({ t: "lopen", href }, { t: "text", v: url }, { t: "lclose" });
      i += url.length;
    } else {
      buf += c;
      i++;
    }
  }
  flush();
  return toks;
}

/** CommonMark's "process emphasis" over the delimiter runs of one scope. */
function matchEmphasis(delims: Delim[]): void {
  const stack: Delim[] = [];
  const floor: Record<string, number> = { "*": 0, "_": 0 };
  for (const d of delims) {
    while (d.close && d.left > 0) {
      let k = stack.length - 1;
      while (k >= floor[d.ch]! && stack[k]!.ch !== d.ch) k--;
      if (k < floor[d.ch]!) {
        floor[d.ch] = stack.length;
        break;
      }
      const o = stack[k]!;
      const use = o.left >= 2 && d.left >= 2 ? 2 : 1;
      o.pushes.push(use);
      d.pops.push(use);
      o.left -= use;
      d.left -= use;
      stack.length = o.left > 0 ? k + 1 : k;
      for (const ch of ["*", "_"]) floor[ch] = Math.min(floor[ch]!, stack.length);
    }
    if (d.open && d.left > 0) stack.push(d);
  }
}

/** Parses inline Markdown into a tree. */
export function parseInline(s: string): Inline[] {
  const toks = tokenize(s);
  // Emphasis never pairs across a link's edge: each link label is its own scope.
  const scopes: Delim[][] = [[]];
  for (const t of toks) {
    if (t.t === "delim") scopes.at(-1)!.push(t);
    else if (t.t === "lopen") scopes.push([]);
    else if (t.t === "lclose") matchEmphasis(scopes.pop()!);
  }
  for (const sc of scopes) matchEmphasis(sc);

  const root: Inline[] = [];
  const stack: Inline[][] = [root];
  const push = (node: Inline & { c: Inline[] }) => {
    // Past the cap the wrapper is dropped: its children join the current level, and
    // pushing that level again keeps every later pop balanced.
    if (stack.length > INLINE_DEPTH_MAX) return void stack.push(stack.at(-1)!);
    stack.at(-1)!.push(node);
    stack.push(node.c);
  };
  const text = (v: string) => {
    const top = stack.at(-1)!;
    const last = top.at(-1);
    if (last?.t === "text") last.v += v;
    else top.push({ t: "text", v });
  };
  for (const t of toks) {
    if (t.t === "text") text(t.v);
    else if (t.t === "code") stack.at(-1)!.push(t);
    else if (t.t === "lopen") push({ t: "link", href: t.href, c: [] });
    else if (t.t === "lclose") stack.length > 1 && stack.pop();
    else {
      for (const _ of t.pops) stack.length > 1 && stack.pop();
      if (t.left > 0) text(t.ch.repeat(t.left));
      for (const use of [...t.pushes].reverse()) push({ t: use === 2 ? "strong" : "em", c: [] });
    }
  }
  return root;
}
