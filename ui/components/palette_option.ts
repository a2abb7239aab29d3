/**
 * One option of the palette's listbox: a session (badge, title, project) or a message
 * hit (badge, role, highlighted snippet, session title). Selection is virtual
 * (aria-selected + the input's aria-activedescendant); the mouse can pick too. Titles
 * and snippets are masked while "Mask secrets" is on; a snippet shows the line around its
 * first highlight (lib/snippet_focus.ts: the option clamps it to two lines). A hit of a
 * related group of a relevance page (issue 27) carries a "related" badge (the full
 * "related · …" label is its tooltip); others look as they always did.
 */
import { html } from "htm/preact";
import type { SearchGroup, SearchHit, SessionSummary } from "../api_client.ts";
import { useMaskSecrets } from "../hooks/use_mask_secrets.ts";
import { shownText, shownTitle, shownTitleText } from "../lib/masking.ts";
import { relatedLabel } from "../lib/relevance.ts";
import { cardSnippet, PALETTE_LEAD_CHARS } from "../lib/snippet_focus.ts";
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

function content(o: PaletteItem, mask: boolean) {
  if (o.kind === "session") {
    return html`
      <${SourceBadge} source=${o.s.source} />
      <span class="pal-title">${shownTitle(o.s, mask)}</span>
      <span class="pal-sub">${shownText(o.s.project ?? "", mask)}</span>
    `;
  }
  const snippet = cardSnippet(o.h, mask, PALETTE_LEAD_CHARS);
  const related = relatedLabel(o.g.relevance);
  return html`
    <${SourceBadge} source=${o.g.source} />
    ${related && html`<span class="badge related" title=${related}>related</span>`}
    <span class=${`role role-${o.h.role}`}>${o.h.role}</span>
    <span class="pal-sub">${shownTitleText(o.g.title ?? o.g.session_id, mask)}</span>
    <span class="pal-snippet">${snippet.lead}<${MarkedText} text=${snippet.text}
      ranges=${snippet.ranges} />${snippet.tail}</span>
  `;
}

/** An option. */
export function PaletteOption({ item, index, selected, onHover, onPick }: PaletteOptionProps) {
  const mask = useMaskSecrets();
  return html`
    <div role="option" id=${optionId(index)} class="pal-opt" data-kind=${item.kind}
      aria-selected=${String(selected)} onMouseMove=${() => !selected && onHover(index)}
      onClick=${() => onPick(item)}>${content(item, mask)}</div>
  `;
}
