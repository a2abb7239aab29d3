/** The colored tag naming a session's tool (Intendant, Codex, Claude Code, Kimi, Pi). */
import { html } from "htm/preact";
import type { Source } from "../api_client.ts";
import { SOURCE_LABEL } from "../lib/sources.ts";

/** A source badge. */
export function SourceBadge({ source }: { source: Source }) {
  return html`<span class=${`badge src src-${source}`}>${SOURCE_LABEL[source] ?? source}</span>`;
}
