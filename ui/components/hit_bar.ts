/**
 * The session's compact sticky header when the detail was opened from a hit: the
 * session's title and source, the query, "hit 3 of 17", and previous/next hit buttons
 * (keys `p` / `n`, see use_hit_nav.ts). It sticks right under the page's top bar, whose
 * height is measured (it wraps on narrow screens), so neither bar hides the other; the
 * entries' scroll margin accounts for both (scroll_to_entry.ts). The title and the query
 * (a search by a key is a key) are masked while "Mask secrets" is on.
 */
import { html } from "htm/preact";
import { useLayoutEffect, useState } from "preact/hooks";
import type { SessionSummary } from "../api_client.ts";
import type { HitNav } from "../hooks/use_hit_nav.ts";
import { useMaskSecrets } from "../hooks/use_mask_secrets.ts";
import { shownText, shownTitle } from "../lib/masking.ts";
import { SourceBadge } from "./source_badge.ts";

/** Props of {@link HitBar}. */
export interface HitBarProps {
  session: SessionSummary;
  q: string;
  nav: HitNav;
}

function countText(nav: HitNav): string {
  const n = nav.hits.length;
  const more = nav.complete ? "" : "+";
  if (n === 0) return "no matching entries";
  if (nav.position > 0) return `hit ${nav.position} of ${n}${more}`;
  return `${n}${more} ${n === 1 ? "hit" : "hits"}`;
}

/** The bar. */
export function HitBar({ session, q, nav }: HitBarProps) {
  const [top, setTop] = useState(0);
  const mask = useMaskSecrets();
  useLayoutEffect(() => {
    const measure = () =>
      setTop(document.querySelector(".topbar")?.getBoundingClientRect().height ?? 0);
    measure();
    addEventListener("resize", measure);
    return () => removeEventListener("resize", measure);
  }, []);
  return html`
    <div class="hit-bar" style=${{ top: `${top}px` }} role="navigation"
      aria-label="Hits in this session">
      <span class="hit-title"><${SourceBadge} source=${session.source} /> ${shownTitle(
        session,
        mask,
      )}</span>
      <span class="hit-q" title="The query">“${shownText(q, mask)}”</span>
      <span class="hit-count" role="status" aria-live="polite">${countText(nav)}</span>
      <span class="hit-buttons">
        <button type="button" class="btn" id="hit-prev" aria-keyshortcuts="p"
          title="Previous hit (p)" disabled=${nav.prev === null || nav.busy}
          onClick=${() => nav.go(-1)}>↑ Previous hit</button>
        <button type="button" class="btn" id="hit-next" aria-keyshortcuts="n"
          title="Next hit (n)" disabled=${nav.next === null || nav.busy}
          onClick=${() => nav.go(1)}>↓ Next hit</button>
      </span>
    </div>
  `;
}
