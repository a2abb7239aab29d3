/**
 * Secret masking of the report zip's text files as they stream (issue 18): each piece of
 * a file is masked by lib/secrets, whole lines at a time, the unfinished last line
 * carried into the next piece, so a secret split across two 1 MiB reads is still found.
 * Bytes are handled as latin1 (one char per byte, lossless), so everything but a secret
 * is copied byte for byte whatever the encoding; a secret's bytes are decoded as UTF-8
 * only to build its masked form (first 4 characters, "…", kind).
 * Carry limits: a line longer than LINE_CARRY_MAX_BYTES is cut at its last whitespace
 * (secrets hold none, a PEM header's spaces aside) or, without one, hard; a PEM
 * private-key block opened and not yet closed is carried whole up to
 * PEM_CARRY_MAX_BYTES, so its base64 lines are masked with it.
 * Text or binary: a file whose first SNIFF_BYTES hold a NUL byte is binary (git's rule)
 * and is copied untouched by the caller.
 */
import { Buffer } from "node:buffer";
import { findSecrets, maskedForm } from "../secrets/mod.ts";

/** Bytes sniffed for a NUL to call a file binary. */
export const SNIFF_BYTES = 8000;
/** Longest line carried whole between pieces. */
const LINE_CARRY_MAX_BYTES = 4 * 1024 * 1024;
/** Longest open PEM block carried whole between pieces (a 16384-bit RSA key is ~13 KiB). */
const PEM_CARRY_MAX_BYTES = 64 * 1024;

/** What was masked in one file. */
export interface MaskTally {
  secrets: number;
  kinds: Record<string, number>;
}

/** True when `head` (the start of a file) holds a NUL byte. */
export function looksBinary(head: Uint8Array): boolean {
  return head.subarray(0, SNIFF_BYTES).includes(0);
}

const utf8 = new TextDecoder();
const enc = new TextEncoder();

/** Masks one latin1 string of whole lines; returns its bytes. */
function maskLatin1(text: string, tally: MaskTally): Uint8Array {
  const spans = findSecrets(text, { latin1: true });
  if (spans.length === 0) return Buffer.from(text, "latin1");
  const parts: Uint8Array[] = [];
  let at = 0;
  for (const s of spans) {
    parts.push(Buffer.from(text.slice(at, s.start), "latin1"));
    const secret = utf8.decode(Buffer.from(text.slice(s.start, s.end), "latin1"));
    parts.push(enc.encode(maskedForm(secret, s.kind)));
    tally.secrets++;
    tally.kinds[s.kind] = (tally.kinds[s.kind] ?? 0) + 1;
    at = s.end;
  }
  parts.push(Buffer.from(text.slice(at), "latin1"));
  return Buffer.concat(parts);
}

const PEM_BEGIN = /^-----BEGIN[ A-Z0-9_-]{0,100}PRIVATE KEY/;

/** Where to cut `text` so that everything before the cut can be masked now. */
function cutPoint(text: string): number {
  let cut = text.lastIndexOf("\n") + 1;
  // An open PEM block before the cut waits for its END (its lines are one secret).
  const begin = text.lastIndexOf("-----BEGIN", cut);
  if (begin >= 0 && PEM_BEGIN.test(text.slice(begin, begin + 160))) {
    const closed = /-----END[ A-Z0-9_-]{0,100}PRIVATE KEY/.test(text.slice(begin, cut));
    if (!closed && text.length - begin <= PEM_CARRY_MAX_BYTES) {
      cut = text.lastIndexOf("\n", begin) + 1;
    }
  }
  if (text.length - cut > LINE_CARRY_MAX_BYTES) {
    // The last whitespace, leaving 256 bytes of context for a value after a `key=`.
    let ws = text.length - 256;
    while (ws > cut && !/\s/.test(text[ws]!)) ws--;
    cut = ws > cut ? ws + 1 : text.length;
  }
  return cut;
}

/** The pieces of a text file, masked; counts what it masked into `tally`. */
export async function* maskedPieces(
  pieces: AsyncIterable<Uint8Array>,
  tally: MaskTally,
): AsyncGenerator<Uint8Array> {
  let carry = "";
  for await (const piece of pieces) {
    const text = carry + Buffer.from(piece.buffer, piece.byteOffset, piece.length)
      .toString("latin1");
    const cut = cutPoint(text);
    carry = text.slice(cut);
    if (cut > 0) yield maskLatin1(text.slice(0, cut), tally);
  }
  if (carry) yield maskLatin1(carry, tally);
}
