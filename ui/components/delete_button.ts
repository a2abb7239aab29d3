/**
 * Delete, in a native session's detail header. "Delete…" opens a confirmation dialog
 * (role alertdialog, modal through useModal: focus starts on Cancel, the safe answer;
 * Escape and a click on the backdrop cancel; Tab stays inside) that says what happens:
 * the session moves to the trash, Undo is offered at once, and `intendant restore`
 * brings it back for 14 days (TRASH_KEEP_DAYS in lib/catalog/trash_layout.ts; the
 * browser test pins the two together). Confirming trashes it, returns to the list and
 * hands the Undo to the App's UndoToast. A failure keeps the dialog open with the
 * server's message; cancelling returns focus to the Delete button.
 */
import { html } from "htm/preact";
import { useRef, useState } from "preact/hooks";
import { type SessionSummary, trashSession } from "../api_client.ts";
import { navigate } from "../hooks/use_hash_route.ts";
import { useModal } from "../hooks/use_modal.ts";
import { useMaskSecrets } from "../hooks/use_mask_secrets.ts";
import { shownTitle } from "../lib/masking.ts";
import { announceTrashed } from "./undo_toast.ts";

/** Days a trashed session stays restorable (the server's TRASH_KEEP_DAYS). */
export const TRASH_DAYS = 14;

/** Props of {@link DeleteButton}. */
export interface DeleteButtonProps {
  session: SessionSummary;
}

/** The button and, while open, its confirmation dialog. */
export function DeleteButton({ session }: DeleteButtonProps) {
  const [open, setOpen] = useState(false);
  const opener = useRef<HTMLButtonElement>(null);
  const cancel = () => {
    setOpen(false);
    setTimeout(() => opener.current?.focus(), 0);
  };
  return html`
    <button type="button" class="btn danger" id="delete-session" ref=${opener}
      aria-haspopup="dialog" onClick=${() => setOpen(true)}>Delete…</button>
    ${open && html`<${ConfirmDelete} session=${session} onCancel=${cancel} />`}
  `;
}

function ConfirmDelete({ session, onCancel }: DeleteButtonProps & { onCancel(): void }) {
  const dialog = useRef<HTMLDivElement>(null);
  const first = useRef<HTMLButtonElement>(null);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState("");
  const busyNow = useRef(false);
  useModal(dialog, first, () => !busyNow.current && onCancel());
  const label = shownTitle(session, useMaskSecrets());
  // Not refused: a crashed runner can leave "running" in the meta for good, and such a
  // session must stay deletable. The user is told what a live one would do, then decides.
  const live = (session.status === "running" || session.status === "waiting") &&
    `It is still marked ${session.status}: if its agent is at work, its next writes fail.`;

  const confirm = async () => {
    busyNow.current = true;
    setBusy(true);
    setError("");
    try {
      await trashSession(session.key);
      announceTrashed({ key: session.key, session_id: session.session_id, label });
      navigate("#/");
    } catch (err) {
      busyNow.current = false;
      setBusy(false);
      setError(`Nothing was deleted: ${(err as Error).message}`);
    }
  };
  const onBackdrop = (e: MouseEvent) => e.target === e.currentTarget && !busy && onCancel();

  return html`
    <div class="backdrop" onClick=${onBackdrop}>
      <div ref=${dialog} class="confirm-dialog" role="alertdialog" aria-modal="true"
        aria-labelledby="delete-h" aria-describedby="delete-d">
        <h2 id="delete-h">Delete this session?</h2>
        <p id="delete-d">
          “${label}” moves to the trash. You can undo right after, and${" "}
          <code>intendant restore ${session.session_id}</code> brings it back for${" "}
          ${TRASH_DAYS} days.
        </p>
        ${live && html`<p class="confirm-warn">${live}</p>`}
        ${error && html`<p class="confirm-error" role="alert">${error}</p>`}
        <div class="confirm-actions">
          <button type="button" class="btn" id="cancel-delete" ref=${first} onClick=${onCancel}
            disabled=${busy}>
            Cancel
          </button>
          <button type="button" class="btn danger-fill" id="confirm-delete" onClick=${confirm}
            disabled=${busy}>${busy ? "Deleting…" : "Move to trash"}</button>
        </div>
      </div>
    </div>
  `;
}
