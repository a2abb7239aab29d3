/**
 * A short status line (partial results, restarted paging, stale locator): a polite live
 * region so screen readers hear it without losing their place (errors are alerts), with
 * an optional action button.
 */
import { html } from "htm/preact";

/** Props of {@link Notice}. */
export interface NoticeProps {
  text: string;
  tone?: "info" | "warn" | "error";
  action?: { label: string; run(): void } | null;
}

/** A notice. */
export function Notice({ text, tone = "info", action }: NoticeProps) {
  const button = action &&
    html`<button type="button" class="link" onClick=${action.run}>${action.label}</button>`;
  const role = tone === "error" ? "alert" : "status";
  return html`<p class=${`notice notice-${tone}`} role=${role}><span>${text}</span>${button}</p>`;
}
