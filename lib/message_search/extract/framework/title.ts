/**
 * A session's title cut from its first human prompt, in the two shapes the sources'
 * format notes fix (both at most {@link TITLE_MAX_CHARS} code points, never mid-character,
 * never normalised):
 * - {@link firstLineTitle}: the prompt's first non-blank line, an ellipsis marking a cut
 *   (Copilot, Cursor, Droid: their CLIs show the first line as the session name);
 * - {@link foldedTitle}: the whole prompt with whitespace runs folded to one space, cut
 *   without a mark (Gemini, Pi, Qwen, as their own session lists show it).
 * Changing either changes stored titles: bump the parser version of every source using it.
 */

/** Code points a title keeps. */
export const TITLE_MAX_CHARS = 100;

/** The first non-blank line of `text`, cut with "…"; null when `text` is blank. */
export function firstLineTitle(text: string): string | null {
  const line = text.trim().split("\n")[0]?.trim() ?? "";
  if (line === "") return null;
  const cps = [...line];
  return cps.length > TITLE_MAX_CHARS ? cps.slice(0, TITLE_MAX_CHARS).join("") + "…" : line;
}

/** `text` with whitespace runs folded to one space, cut to {@link TITLE_MAX_CHARS}. */
export function foldedTitle(text: string): string {
  const flat = text.replace(/\s+/g, " ").trim();
  const cps = Array.from(flat);
  return cps.length <= TITLE_MAX_CHARS ? flat : cps.slice(0, TITLE_MAX_CHARS).join("");
}
