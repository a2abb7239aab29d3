/**
 * JSON for a terminal or a pipe. JSON.stringify escapes the C0 controls and lone
 * surrogates, but writes DEL, the C1 controls (U+0080–U+009F, 8-bit CSI/OSC to some
 * terminals), the bidi controls and U+2028/U+2029 raw: `intendant sessions --json` on a
 * terminal could then still be driven by a hostile session title. This escapes those too,
 * as \uXXXX. Lossless: outside strings JSON is ASCII, so every match sits inside a string
 * literal and the parsed value is identical to JSON.parse(JSON.stringify(value)).
 */

// DEL, C1, Arabic letter mark, zero-width and directional marks, line/paragraph
// separators, bidi embeddings/overrides/isolates, invisible operators and deprecated
// format controls, BOM, interlinear annotation controls. Escaping more than the strict
// minimum costs nothing: the parsed value is the same.
const UNSAFE = /[\x7f-\x9f\u061c\u200b-\u200f\u2028-\u202e\u2060-\u206f\ufeff\ufff9-\ufffb]/g;

/** JSON.stringify(value, null, indent) with every terminal-unsafe character escaped. */
export function stringifyTerminalSafe(value: unknown, indent = 2): string {
  const json = JSON.stringify(value, null, indent);
  if (json === undefined) throw new TypeError(`Cannot print ${typeof value} as JSON`);
  return json.replace(UNSAFE, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`);
}
