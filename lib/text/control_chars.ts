/**
 * Untrusted text hygiene. Every name, title, snippet and path that came from a transcript
 * or the network is untrusted: printed raw it can drive a terminal (ESC sequences set the
 * window title, erase the screen, forge hyperlinks; C1 controls are 8-bit escapes; BEL,
 * NUL and backspace corrupt the line) or reorder what the reader sees (bidi overrides).
 * Two functions, one rule set:
 *  - `stripControls` removes them from text that is stored (a session name) — a whole
 *    escape sequence goes, not only its ESC, so no `]0;title` residue remains;
 *  - `terminalSafe` is what the CLI prints: the same removal, lone surrogates become
 *    U+FFFD, and line breaks and tabs become spaces unless `multiline` keeps `\n`.
 * Invariant: the output of either contains no C0 control but TAB and LF (and terminalSafe
 * not even those unless `multiline`), no DEL, no C1 control and no bidi embedding,
 * override or isolate. Clean text (emoji, CJK, accents, RTL letters) passes unchanged.
 * Pure; no allocation when the text is clean (the common case).
 */

// CSI: ESC [ (or 8-bit U+009B) params, intermediates, final. Control strings (OSC, DCS,
// SOS, PM, APC, 7- or 8-bit introducer) run to BEL or ST (ESC \ or U+009C); the body is
// cut at the first control character instead of running to the end of the text, so an
// unterminated OSC costs at most the rest of its line, never the lines after it. Other
// escapes: ESC, intermediates (0x20–0x2F, e.g. ESC ( B), one final. Stray controls left
// after that (a lone ESC or C1 byte) are removed by CONTROLS.
// Matching control characters is this module's purpose.
const ESCAPES =
  // deno-lint-ignore no-control-regex
  /(?:\x1b\[|\x9b)[\x30-\x3f]*[\x20-\x2f]*[\x40-\x7e]?|(?:\x1b[\]PX^_]|[\x90\x98\x9d\x9e\x9f])[^\x00-\x1f\x7f-\x9f]*(?:\x07|\x1b\\|\x9c)?|\x1b[\x20-\x2f]*[\x30-\x7e]?/g;
// C0 controls except TAB and LF (CR included: a bare CR rewrites the visible line), DEL,
// C1 controls, and the bidi embedding/override/isolate controls (Trojan Source). The
// implicit marks U+200E/U+200F are kept: right-to-left text needs them, and they cannot
// reorder anything beyond their own neighbourhood.
// deno-lint-ignore no-control-regex
const CONTROLS = /[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]/g;
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g;
// deno-lint-ignore no-control-regex
const DIRTY = /[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069\ud800-\udfff]/;
// Line and paragraph separators start a new line in some terminals and viewers.
const BREAKS = /[\t\n\u2028\u2029]/g;

/** Removes escape sequences, control characters (TAB and LF kept) and bidi overrides. */
export function stripControls(s: string): string {
  if (!DIRTY.test(s)) return s;
  return s.replace(ESCAPES, "").replace(CONTROLS, "");
}

/** Options for {@link terminalSafe}. */
export interface TerminalSafeOptions {
  /** Keep line feeds (a multi-line block); otherwise every line break and tab is a space. @default false */
  multiline?: boolean;
}

/** Untrusted text made safe to print on a terminal. */
export function terminalSafe(s: string, o: TerminalSafeOptions = {}): string {
  let out = stripControls(s);
  if (DIRTY.test(out)) out = out.replace(LONE_SURROGATE, "\ufffd");
  return out.replace(BREAKS, (c) => (o.multiline && c !== "\t" ? "\n" : " "));
}
