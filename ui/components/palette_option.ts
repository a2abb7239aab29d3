/**
 * One option of the palette's listbox: a session (badge, title, project) or a message
 * hit (badge, role, highlighted snippet, session title). Selection is virtual
 * (aria-selected + the input's aria-activedescendant); the mouse can pick too.
 */
import { html } from "htm/preact";
import type { SearchGroup, SearchHit, SessionSummary } from "../api_client.ts";
import { snippetRanges } from "../lib/highlight.ts";
import { sessionTitle } from "../lib/markdown.ts";
import { MarkedText } from "./marked_text.ts";
import { SourceBadge } from "./source_badge.ts";

/** What an option opens. */
export type PaletteItem =
  | { kind: "session"; s: SessionSummary; href: string }
  | { kind: "message"; g: SearchGroup; h: SearchHit; href: string };

/** Props of {@link PaletteOption}. */
export interface PaletteOptionProps {
  item: PaletteItem;
  index: number;
  selected: boolean;
  onHover(index: number): void;
  onPick(item: PaletteItem): void;
}

/** The element id of option `i` (for aria-activedescendant). */
export const optionId = (i: number) => `pal-opt-${i}`;

function content(o: PaletteItem) {
  if (o.kind === "session") {
    return html`
      <${SourceBadge} source=${o.s.source} />
      <span class="pal-title">${sessionTitle(o.s)}</span>
      <span class="pal-sub">${o.s.project ?? ""}</span>
    `;
  }
  const ranges = snippetRanges(o.h.snippet, o.h.snippet_offset_bytes, o.h.ranges);
  return html`
    <${SourceBadge} source=${o.g.source} />
    <span class=${`role role-${o.h.role}`}>${o.h.role}</span>
    <span class="pal-sub">${o.g.title ?? o.g.session_id}</span>
    <span class="pal-snippet"><${MarkedText} text=${o.h.snippet} ranges=${ranges} /></span>
  `;
}

/** An option. */
export function PaletteOption({ item, index, selected, onHover, onPick }: PaletteOptionProps) {
  return html`
    <div role="option" id=${optionId(index)} class="pal-opt" data-kind=${item.kind}
      aria-selected=${String(selected)} onMouseMove=${() => !selected && onHover(index)}
      onClick=${() => onPick(item)}>${content(item)}</div>
  `;
}
