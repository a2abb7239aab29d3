/**
 * Text hygiene for untrusted strings (names, titles, snippets, paths from transcripts and
 * the network): the only public door of lib/text/. Human output goes through
 * `terminalSafe`, --json output through `stringifyTerminalSafe`, stored names through
 * `stripControls`.
 */
export { stripControls, terminalSafe } from "./control_chars.ts";
export type { TerminalSafeOptions } from "./control_chars.ts";
export { stringifyTerminalSafe } from "./terminal_json.ts";
export { utf8Length } from "./utf8_length.ts";
export { formatBytes, parseByteSize } from "./byte_size.ts";
export { concatBytes } from "./concat_bytes.ts";
