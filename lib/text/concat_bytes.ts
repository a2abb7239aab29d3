/**
 * Joining byte chunks: the one helper for it. A lone non-empty chunk is returned as it is
 * (no copy), so callers must not mutate the result when they keep their parts.
 */

/** `parts` joined into one array (empty parts ignored). */
export function concatBytes(parts: readonly Uint8Array[]): Uint8Array {
  const full = parts.filter((p) => p.length > 0);
  if (full.length === 1) return full[0]!;
  const out = new Uint8Array(full.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of full) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}
