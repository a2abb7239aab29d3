/**
 * The masker the MCP server applies to everything quoted from a transcript: the one rule
 * set of lib/secrets (its door), re-exported so this folder names it in one place.
 */
export { markSnippet, maskSecrets, maskTitle, maskWithRanges } from "../secrets/mod.ts";
