/**
 * Secret masking: the only public door of lib/secrets/. One masker for everything that
 * leaves Intendant (MCP results, Markdown export, the report zip, the dashboard toggle,
 * the `intendant secrets` audit).
 * Invariants: PURE TypeScript (no Deno.*, no node:*): the UI bundle imports this door.
 * The index keeps the original text — masking is applied on the way out, never when
 * indexing, so a user can still find a message by the key it holds.
 * Masked form: the first 4 characters, "…" and the kind in brackets: `sk-a…[openai key]`.
 * The rule set (rules.ts) follows secretlint's recommended preset and gitleaks' default
 * config for provider formats, plus generic password/secret/bearer/URL-credential shapes
 * with placeholder and entropy checks so prose, hashes and UUIDs are left alone.
 */
export { findSecrets, maskedForm, maskSecrets } from "./find.ts";
export type { SecretSpan } from "./find.ts";
export { maskWithRanges } from "./ranges.ts";
export { markSnippet } from "./marked_snippet.ts";
export { CUT_FRAGMENT_KIND, maskCutEdges, maskTitle } from "./cut_edges.ts";
export type { MarkSnippetOptions } from "./marked_snippet.ts";
export { SECRET_KINDS } from "./rules.ts";
