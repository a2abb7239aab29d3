/** The top bar: the product name (a link home) and the palette's button with its shortcut. */
import { html } from "htm/preact";

/** The bar. */
export function HeaderBar({ onPalette }: { onPalette(): void }) {
  const mac = /Mac|iPhone|iPad/.test(navigator.platform);
  const shortcut = mac ? "Meta+K" : "Control+K";
  return html`
    <header class="topbar">
      <a class="brand" href="#/"><span class="logo" aria-hidden="true">◆</span> Intendant</a>
      <button type="button" class="btn palette-btn" onClick=${onPalette} aria-haspopup="dialog"
        aria-keyshortcuts=${shortcut}>Search… <kbd>${mac ? "⌘" : "Ctrl+"}K</kbd></button>
    </header>
  `;
}
