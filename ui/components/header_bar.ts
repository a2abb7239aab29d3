/**
 * The top bar: the product name (a link home), the "Mask secrets" switch, and the
 * palette's button with its shortcut.
 */
import { html } from "htm/preact";
import { MaskToggle } from "./mask_toggle.ts";

/** The bar. */
export function HeaderBar({ onPalette }: { onPalette(): void }) {
  const mac = /Mac|iPhone|iPad/.test(navigator.platform);
  const shortcut = mac ? "Meta+K" : "Control+K";
  return html`
    <header class="topbar">
      <a class="brand" href="#/"><span class="logo" aria-hidden="true">◆</span> Intendant</a>
      <span class="topbar-tools">
        <${MaskToggle} />
        <button type="button" class="btn palette-btn" onClick=${onPalette} aria-haspopup="dialog"
          aria-keyshortcuts=${shortcut}>Search… <kbd>${mac ? "⌘" : "Ctrl+"}K</kbd></button>
      </span>
    </header>
  `;
}
