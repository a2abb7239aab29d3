/**
 * The Undo toast, mounted once by the App (it outlives the detail page a delete leaves).
 * DeleteButton calls `announceTrashed` after the server moved a session to the trash;
 * the toast then offers Undo for UNDO_MS, and Undo restores it through the API and says
 * the session is back. `onChange` runs after the delete is announced and after a
 * restore, so the catalog reloads (the list drops the session, then shows it again).
 * The timer pauses while the pointer or the focus is inside the toast (the user, not
 * the clock, decides when the offer goes: WCAG 2.2.1); the live region is always in the
 * DOM so screen readers announce each message.
 */
import { html } from "htm/preact";
import { useEffect, useRef, useState } from "preact/hooks";
import { restoreSession } from "../api_client.ts";

/** How long Undo stays offered. */
export const UNDO_MS = 10_000;
/** How long the outcome ("… is back") stays. */
const OUTCOME_MS = 5_000;
const TRASHED_EVENT = "intendant:trashed";

/** A session the server just moved to the trash. */
export interface TrashedNotice {
  key: string;
  session_id: string;
  /** What the user calls it (name, title or id). */
  label: string;
}

/** Tells the mounted UndoToast that `n` was trashed. */
export function announceTrashed(n: TrashedNotice): void {
  dispatchEvent(new CustomEvent<TrashedNotice>(TRASHED_EVENT, { detail: n }));
}

type Phase = "offer" | "restoring" | "restored" | "failed";

/** Props of {@link UndoToast}. */
export interface UndoToastProps {
  /** The catalog changed (a delete, a restore): reload it. */
  onChange(): void;
}

/** The toast. */
export function UndoToast({ onChange }: UndoToastProps) {
  const [item, setItem] = useState<TrashedNotice | null>(null);
  const [phase, setPhase] = useState<Phase>("offer");
  const [error, setError] = useState("");
  const [held, setHeld] = useState(false);
  const changed = useRef(onChange);
  changed.current = onChange;

  useEffect(() => {
    const on = (e: Event) => {
      setItem((e as CustomEvent<TrashedNotice>).detail);
      setHeld(false);
      setPhase("offer");
      setError("");
      changed.current();
    };
    addEventListener(TRASHED_EVENT, on);
    return () => removeEventListener(TRASHED_EVENT, on);
  }, []);

  useEffect(() => {
    if (!item || held || phase === "restoring") return;
    const t = setTimeout(() => setItem(null), phase === "offer" ? UNDO_MS : OUTCOME_MS);
    return () => clearTimeout(t);
  }, [item, phase, held]);

  const undo = async () => {
    if (!item) return;
    setPhase("restoring");
    try {
      await restoreSession(item.key);
      setPhase("restored");
      changed.current();
    } catch (err) {
      setError((err as Error).message);
      setPhase("failed");
    }
  };

  const name = item ? `“${item.label}”` : "";
  const text = {
    offer: `Moved ${name} to the trash.`,
    restoring: `Restoring ${name}…`,
    restored: `${name} is back.`,
    failed: `Could not restore ${name}: ${error}. ` +
      `\`intendant restore ${item?.session_id ?? ""}\` can bring it back.`,
  }[phase];
  const undoBtn = (phase === "offer" || phase === "restoring") && html`
    <button type="button" class="btn small" id="undo-delete" onClick=${undo}
      disabled=${phase === "restoring"}>Undo</button>
  `;
  const hold = () => setHeld(true);
  const release = () => setHeld(false);
  const dismiss = () => setItem(null);
  const toast = item && html`
    <div class=${`toast toast-${phase}`} onMouseEnter=${hold} onMouseLeave=${release}
      onFocusIn=${hold} onFocusOut=${release}>
      <span class="toast-text">${text}</span>
      ${undoBtn}
      <button type="button" class="icon-btn" aria-label="Dismiss" onClick=${dismiss}>×</button>
    </div>
  `;
  return html`<div class="toast-region" role="status" aria-live="polite">${toast}</div>`;
}
