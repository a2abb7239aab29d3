/**
 * Steer a live native session: text the runner delivers as a user message at its next
 * turn boundary (POST /api/session/{key}/steer, the same queue `intendant ctl steer`
 * writes). A waiting session takes it after its question is answered. The result
 * ("queued") and errors stay inline; the field clears on success so a second steer is
 * a fresh one, and the steer itself appears in the activity as the stream reports it.
 */
import { html } from "htm/preact";
import { useState } from "preact/hooks";
import { steerSession } from "../api_client.ts";

/** Props of {@link SteerForm}. */
export interface SteerFormProps {
  sessionKey: string;
}

/** The form. */
export function SteerForm({ sessionKey }: SteerFormProps) {
  const [text, setText] = useState("");
  const [sending, setSending] = useState(false);
  const [result, setResult] = useState<{ ok: boolean; text: string } | null>(null);

  const send = async (e: Event) => {
    e.preventDefault();
    if (sending) return;
    if (!text.trim()) return setResult({ ok: false, text: "Write what the agent should do" });
    setSending(true);
    setResult(null);
    try {
      await steerSession(sessionKey, text);
      setText("");
      setResult({ ok: true, text: "Steer queued — delivered at the next turn" });
    } catch (err) {
      setResult({ ok: false, text: (err as Error).message });
    } finally {
      setSending(false);
    }
  };

  const status = result &&
    (result.ok
      ? html`<span class="action-status" role="status">${result.text}</span>`
      : html`<span class="err" role="alert">${result.text}</span>`);
  return html`<form class="control-panel steer" onSubmit=${send}>
    <label class="control-h" for="steer-text">Steer the agent at the next turn</label>
    <div class="control-row">
      <input id="steer-text" class="control-text" type="text" value=${text} disabled=${sending}
        placeholder="e.g. also update the docs" maxlength="100000"
        onInput=${(e: Event) => setText((e.currentTarget as HTMLInputElement).value)} />
      <button type="submit" class="btn" id="send-steer" disabled=${sending}>
        ${sending ? "Sending…" : "Send steer"}
      </button>
    </div>
    ${status}
  </form>`;
}
