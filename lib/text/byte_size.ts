/**
 * Byte sizes as people write and read them: `formatBytes` for output (binary units, one
 * decimal), `parseByteSize` for settings (`20G`, `512MiB`, `1.5T`, or plain bytes).
 * Binary units throughout (G = GiB): disk budgets are compared with what `du` reports.
 */

const UNITS = ["B", "KiB", "MiB", "GiB", "TiB"];

/** 1536 → "1.5 KiB". */
export function formatBytes(n: number): string {
  let v = n;
  let u = 0;
  while (v >= 1024 && u < UNITS.length - 1) {
    v /= 1024;
    u++;
  }
  return u === 0 ? `${n} B` : `${v.toFixed(1)} ${UNITS[u]}`;
}

/**
 * `text` as a whole number of bytes: digits (a decimal point allowed before a unit)
 * followed by an optional unit B, K, M, G, T (also KB/KiB, …; any case). RangeError
 * naming the text otherwise, or when it is not a positive safe integer.
 */
export function parseByteSize(text: string): number {
  const m = /^\s*(\d+(?:\.\d+)?)\s*([kmgt]?)(?:i?b)?\s*$/i.exec(text);
  if (!m) {
    throw new RangeError(`"${text}" is not a size: use bytes or a unit, e.g. 20G, 512M`);
  }
  const pow = m[2] ? " kmgt".indexOf(m[2].toLowerCase()) : 0;
  const n = Math.floor(Number(m[1]) * 1024 ** pow);
  if (!Number.isSafeInteger(n) || n <= 0) {
    throw new RangeError(`"${text}" is not a size greater than zero`);
  }
  return n;
}
