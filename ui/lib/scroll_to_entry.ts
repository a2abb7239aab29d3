/**
 * Brings a detail entry into view below everything sticky at the top of the page (the
 * top bar and, when opened from a hit, the hit bar): an entry that fits is centered in
 * the room left under them; a taller one starts just under them (its scroll-margin-top
 * is set to their height first, so scrollIntoView never parks it behind a bar). Then
 * the entry takes focus without a second scroll. DOM-only; no-op for a missing element.
 */

/** Height the sticky bars will take once the page scrolls (the hit bar sticks under the top bar). */
function stickyHeight(): number {
  let h = 0;
  for (const el of document.querySelectorAll<HTMLElement>(".topbar, .hit-bar")) {
    h += el.getBoundingClientRect().height;
  }
  return h;
}

/** Scrolls `el` into the free part of the viewport and focuses it. */
export function scrollToEntry(el: HTMLElement | null): void {
  if (!el) return;
  const top = stickyHeight();
  const gap = 8;
  el.style.scrollMarginTop = `${top + gap}px`;
  const height = el.getBoundingClientRect().height;
  if (height + top + 2 * gap <= innerHeight) {
    // Center it in the room left under the bars.
    const room = innerHeight - top;
    const y = scrollY + el.getBoundingClientRect().top - top - (room - height) / 2;
    scrollTo({ top: Math.max(0, y) });
  } else el.scrollIntoView({ block: "start" });
  el.focus({ preventScroll: true });
}
