/**
 * The message search's "Best match | Newest" switch (issue 27): two toggle buttons with
 * aria-pressed, like the scope switch. Best match asks the server for a relevance page
 * (`sort=relevance`, kept in the URL by lib/route.ts); Newest is the order search always
 * had. `unavailable` (team scope: the team reader orders newest first only) shows Newest
 * pressed and Best match disabled, saying why in its tooltip. The buttons never take
 * focus on a click (`mousedown` default prevented), so the palette's input keeps it and
 * its arrow keys and Enter go on working.
 */
import { html } from "htm/preact";
import type { SearchSort } from "../api_client.ts";

/** Props of {@link SortToggle}. */
export interface SortToggleProps {
  sort: SearchSort;
  onSort(sort: SearchSort): void;
  /** Why Best match cannot be used here (null: it can). */
  unavailable?: string | null;
}

const OPTIONS: [SearchSort, string, string][] = [
  [
    "relevance",
    "Best match",
    "Sessions where one message holds all your words first, best first; then related ones",
  ],
  ["newest", "Newest", "Sessions with the most recent matching message first"],
];

/** The switch. */
export function SortToggle({ sort, onSort, unavailable = null }: SortToggleProps) {
  const shown = unavailable ? "newest" : sort;
  const button = ([value, label, tip]: [SearchSort, string, string]) => {
    const off = unavailable !== null && value === "relevance";
    return html`
      <button type="button" data-sort=${value} aria-pressed=${String(shown === value)}
        disabled=${off} title=${off ? unavailable : tip}
        onMouseDown=${(e: MouseEvent) => e.preventDefault()}
        onClick=${() => value !== shown && onSort(value)}>${label}</button>
    `;
  };
  return html`
    <div class="seg sort-toggle" role="group" aria-label="Order of message results">
      ${OPTIONS.map(button)}
    </div>
  `;
}
