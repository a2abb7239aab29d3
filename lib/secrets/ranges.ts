/**
 * Masking a search snippet while keeping its highlight ranges right. The search API's
 * ranges are [start, end) UTF-8 BYTE offsets into the snippet; masking changes lengths,
 * so each offset is moved onto the masked text.
 * Rules: a range that touches a secret (overlaps it by at least one byte) grows to cover
 * the secret's whole masked form, so a hit inside a key still shows where it is without
 * revealing which characters matched; offsets after a secret shift by the difference in
 * UTF-8 bytes; ranges that end up overlapping are merged, so the output stays sorted and
 * disjoint. Offsets past the end of the text are shifted like any other.
 */
import { utf8Length } from "../text/mod.ts";
import { findSecrets, maskedForm, type SecretSpan } from "./find.ts";

interface ByteSpan {
  start: number;
  end: number;
  maskedStart: number;
  maskedEnd: number;
}

/** Masks `text` and moves its highlight byte ranges onto the masked text. */
export function maskWithRanges(
  text: string,
  ranges: [number, number][],
): { text: string; ranges: [number, number][]; spans: SecretSpan[] } {
  const spans = findSecrets(text);
  if (spans.length === 0) {
    return { text, ranges: ranges.map(([s, e]) => [s, e]), spans };
  }
  let out = "";
  let at = 0;
  let bytesIn = 0;
  let bytesOut = 0;
  const bytes: ByteSpan[] = [];
  for (const s of spans) {
    const before = text.slice(at, s.start);
    const secret = text.slice(s.start, s.end);
    const masked = maskedForm(secret, s.kind);
    const gap = utf8Length(before);
    const span = {
      start: bytesIn + gap,
      end: bytesIn + gap + utf8Length(secret),
      maskedStart: bytesOut + gap,
      maskedEnd: bytesOut + gap + utf8Length(masked),
    };
    bytes.push(span);
    bytesIn = span.end;
    bytesOut = span.maskedEnd;
    out += before + masked;
    at = s.end;
  }
  out += text.slice(at);
  return { text: out, ranges: moveRanges(ranges, bytes), spans };
}

function moveRanges(ranges: [number, number][], spans: ByteSpan[]): [number, number][] {
  const moved: [number, number][] = [];
  for (const [s, e] of ranges) {
    let start = shift(s, spans);
    let end = shift(e, spans);
    for (const b of spans) {
      if (s < b.end && b.start < e) {
        start = Math.min(start, b.maskedStart);
        end = Math.max(end, b.maskedEnd);
      }
    }
    const last = moved[moved.length - 1];
    if (last && start < last[1]) last[1] = Math.max(last[1], end);
    else moved.push([start, end]);
  }
  return moved;
}

/** An offset outside every secret, moved by the length changes of the secrets before it. */
function shift(p: number, spans: ByteSpan[]): number {
  let delta = 0;
  for (const b of spans) {
    if (b.end <= p) delta = b.maskedEnd - b.end;
    else if (b.start < p) return b.maskedStart; // inside: the caller widens to the whole mask
    else break;
  }
  return p + delta;
}
