/**
 * Finding and masking secrets in a text: runs the rule set (rules.ts) behind a keyword
 * prefilter, resolves overlaps, and renders each secret as its masked form.
 * Invariants: spans are UTF-16 offsets into the ORIGINAL text, sorted by start and
 * non-overlapping; on overlap the longer span wins, on equal length the earlier rule.
 * The rules scan the text with terminal escapes taken out (scan_text.ts: a key wrapped
 * in colour codes is a key), and a span covers every escape inside it.
 * Pure and synchronous; never throws on any string input.
 * Cost: one lowercase copy of the text and one `includes` per rule keyword; a text with
 * no keyword runs no regex at all (ordinary prose: most messages).
 */
import { SECRET_RULES } from "./rules.ts";
import { scanTextOf } from "./scan_text.ts";

/** One secret found in a text: UTF-16 offsets into the ORIGINAL text. */
export interface SecretSpan {
  start: number;
  end: number;
  kind: string;
  rule: string;
}

const ANY_KEYWORD = new RegExp(
  [...new Set(SECRET_RULES.flatMap((r) => r.keywords))]
    .map((k) => k.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")).join("|"),
);

interface Candidate extends SecretSpan {
  priority: number;
}

/**
 * Every secret in `original`, sorted by start, non-overlapping (the longest wins).
 * `latin1`: the string holds bytes one char each (scan_text.ts).
 */
export function findSecrets(original: string, o: { latin1?: boolean } = {}): SecretSpan[] {
  if (original.length < 8) return [];
  const scan = scanTextOf(original, o);
  const text = scan.clean;
  const lower = text.toLowerCase();
  // One scan for any keyword first: most messages hold none, and one alternation is
  // cheaper than an `includes` per keyword (bench-corpus prose: 44 → 61 MB/s overall).
  if (!ANY_KEYWORD.test(lower)) return [];
  const found: Candidate[] = [];
  SECRET_RULES.forEach((rule, priority) => {
    if (!rule.keywords.some((k) => lower.includes(k))) return;
    const group = rule.group ?? 0;
    rule.re.lastIndex = 0;
    for (const m of text.matchAll(rule.re)) {
      const at = m.indices?.[group];
      const secret = m[group];
      if (!at || secret === undefined || secret.length === 0) continue;
      if (rule.valid && !rule.valid(secret)) continue;
      found.push({
        start: scan.toOriginal(at[0]),
        end: scan.toOriginalEnd(at[1]),
        kind: rule.kind,
        rule: rule.id,
        priority,
      });
    }
  });
  return resolveOverlaps(found);
}

function resolveOverlaps(found: Candidate[]): SecretSpan[] {
  if (found.length === 0) return [];
  found.sort((a, b) => (b.end - b.start) - (a.end - a.start) || a.priority - b.priority);
  const kept: SecretSpan[] = [];
  for (const c of found) {
    // Candidates per text are few (a handful), so a linear overlap check is cheapest.
    if (kept.some((k) => c.start < k.end && k.start < c.end)) continue;
    kept.push({ start: c.start, end: c.end, kind: c.kind, rule: c.rule });
  }
  return kept.sort((a, b) => a.start - b.start);
}

/**
 * First 4 characters of the secret, "…", and the kind: `sk-a…[openai key]`. A secret
 * shorter than 12 characters (a short password) shows a third of its length instead, so
 * the mask never gives most of it away.
 */
export function maskedForm(secret: string, kind: string): string {
  // The span may hold escapes (a key with colour codes inside): never show them.
  const chars = Array.from(scanTextOf(secret).clean);
  const keep = Math.min(4, Math.floor(chars.length / 3));
  return `${chars.slice(0, keep).join("")}…[${kind}]`;
}

/** `text` with each secret replaced by maskedForm(secret, kind), and the spans found. */
export function maskSecrets(text: string): { text: string; spans: SecretSpan[] } {
  const spans = findSecrets(text);
  if (spans.length === 0) return { text, spans };
  let out = "";
  let at = 0;
  for (const s of spans) {
    out += text.slice(at, s.start) + maskedForm(text.slice(s.start, s.end), s.kind);
    at = s.end;
  }
  return { text: out + text.slice(at), spans };
}
