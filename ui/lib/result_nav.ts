/**
 * Keyboard movement through search results: ArrowDown in the search box enters the
 * results, ArrowDown/ArrowUp move between them, ArrowUp from the first returns to the box.
 * A result is any visible element marked `data-result` (a session card's link, a hit's
 * link), in document order, so every lane and the plain list take part without knowing
 * about each other. DOM only; no state.
 */

const RESULT = "[data-result]";

function visibleResults(): HTMLElement[] {
  return [...document.querySelectorAll<HTMLElement>(RESULT)].filter((el) =>
    el.offsetParent !== null
  );
}

/** Focuses the first visible result; false when there is none. */
export function focusFirstResult(): boolean {
  const first = visibleResults()[0];
  first?.focus();
  return first !== undefined;
}

/** keydown handler for the results' container. */
export function onResultsKeyDown(e: KeyboardEvent): void {
  if (e.key !== "ArrowDown" && e.key !== "ArrowUp") return;
  if (e.altKey || e.ctrlKey || e.metaKey || e.shiftKey) return;
  const all = visibleResults();
  const at = all.indexOf(document.activeElement as HTMLElement);
  if (at < 0) return;
  e.preventDefault();
  if (e.key === "ArrowDown") all[Math.min(at + 1, all.length - 1)]!.focus();
  else if (at === 0) document.getElementById("q")?.focus();
  else all[at - 1]!.focus();
}
