/**
 * Modal behaviour for a dialog: the first field is focused before the first paint (so
 * no keystroke can land behind the dialog), Escape closes it from anywhere, and Tab /
 * Shift+Tab cycle through the dialog's own controls only (a focus trap, which also pulls
 * focus back in if it ever escaped). Listeners live on the window while mounted.
 */
import type { RefObject } from "preact";
import { useEffect, useLayoutEffect, useRef } from "preact/hooks";

const FOCUSABLE = "input, button, [href], [tabindex]:not([tabindex='-1'])";

/** Wires `dialog` as a modal that focuses `first` and calls `onClose` on Escape. */
export function useModal(
  dialog: RefObject<HTMLElement>,
  first: RefObject<HTMLElement>,
  onClose: () => void,
): void {
  const close = useRef(onClose);
  close.current = onClose;
  useLayoutEffect(() => first.current?.focus(), []);
  useEffect(() => {
    const onKey = (e: KeyboardEvent) => {
      if (e.key === "Escape") {
        e.preventDefault();
        close.current();
      } else if (e.key === "Tab" && dialog.current) {
        const f = [...dialog.current.querySelectorAll<HTMLElement>(FOCUSABLE)];
        if (!f.length) return;
        e.preventDefault();
        const i = f.indexOf(document.activeElement as HTMLElement);
        const next = i < 0 ? 0 : (i + (e.shiftKey ? -1 : 1) + f.length) % f.length;
        f[next]!.focus();
      }
    };
    addEventListener("keydown", onKey);
    return () => removeEventListener("keydown", onKey);
  }, []);
}
