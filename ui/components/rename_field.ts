/**
 * Inline rename: a labelled button turns the name into a text field; Enter saves
 * (POST /api/session/{key}/name; an empty name clears it back to the title), Escape
 * cancels, and focus returns to the button either way. Errors stay inline.
 */
import { html } from "htm/preact";
import { useEffect, useRef, useState } from "preact/hooks";
import { renameSession } from "../api_client.ts";

/** Props of {@link RenameField}. */
export interface RenameFieldProps {
  sessionKey: string;
  name: string | null;
  /** What the session is called without a name (the field's placeholder). */
  fallback: string;
  onRenamed(name: string | null): void;
}

/** The rename control. */
export function RenameField({ sessionKey, name, fallback, onRenamed }: RenameFieldProps) {
  const [editing, setEditing] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const [saving, setSaving] = useState(false);
  const input = useRef<HTMLInputElement>(null);
  const button = useRef<HTMLButtonElement>(null);
  useEffect(() => {
    if (editing) input.current?.select();
  }, [editing]);

  const finish = () => {
    setEditing(false);
    setError(null);
    // After the re-render puts the button back.
    setTimeout(() => button.current?.focus(), 0);
  };
  const save = async () => {
    const value = input.current?.value.trim() ?? "";
    if (value === (name ?? "")) return finish();
    setSaving(true);
    try {
      const r = await renameSession(sessionKey, value || null);
      onRenamed(r.name);
      finish();
    } catch (err) {
      setError((err as Error).message);
    } finally {
      setSaving(false);
    }
  };
  const onKeyDown = (e: KeyboardEvent) => {
    if (e.key === "Enter") void save();
    else if (e.key === "Escape") finish();
    else return;
    e.preventDefault();
    e.stopPropagation();
  };

  if (!editing) {
    return html`
      <button type="button" ref=${button} class="icon-btn rename-btn" title="Rename"
        aria-label="Rename session" onClick=${() => setEditing(true)}>✎</button>
    `;
  }
  return html`<span class="rename">
    <input ref=${input} class="rename-input" type="text" value=${name ?? ""} maxlength="200"
      placeholder=${fallback} aria-label="Session name (empty to clear)" disabled=${saving}
      onKeyDown=${onKeyDown} />
    <button type="button" class="btn small" onClick=${save} disabled=${saving}>Save</button>
    <button type="button" class="btn small ghost" onClick=${finish}>Cancel</button>
    ${error && html`<span class="err" role="alert">${error}</span>`}
  </span>`;
}
