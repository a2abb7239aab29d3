/**
 * Roll a live native session back: choose a message, confirm, and the conversation is
 * cut after it (POST /api/session/{key}/rollback with its seq, the same request
 * `intendant ctl rollback --to-seq` makes). A picker here rather than a "Roll back to
 * here" action on each row: the rows are another component's concern and carry no
 * session controls, and a picker lists exactly the valid targets — the loaded user and
 * assistant messages that have a seq and are not already superseded. A rollback drops
 * messages, so it takes a second, explicit click that names what will be kept. The
 * result (queued for the next turn, or applied) and errors stay inline; the cut itself
 * appears in the activity as the stream reports it.
 */
import { html } from "htm/preact";
import { useState } from "preact/hooks";
import { type DetailEntry, rollbackSession } from "../api_client.ts";
import { shownText } from "../lib/masking.ts";

/** Props of {@link RollbackForm}. */
export interface RollbackFormProps {
  sessionKey: string;
  /** The loaded entries (targets are taken from these). */
  entries: readonly DetailEntry[];
}

interface Target {
  seq: number;
  label: string;
}

const PREVIEW_CHARS = 70;

/** Messages a rollback may keep as the last one, newest first. */
export function rollbackTargets(entries: readonly DetailEntry[]): Target[] {
  const out: Target[] = [];
  for (const e of entries) {
    const seq = (e.detail as { seq?: unknown } | undefined)?.seq;
    if (e.kind !== "message" || e.superseded || typeof seq !== "number") continue;
    const who = e.role === "assistant" ? "Assistant" : "User";
    // Masked always: the preview is a picker's label, never where a key needs reading.
    const text = shownText(e.text ?? "", true).replace(/\s+/g, " ").trim();
    const cut = text.length > PREVIEW_CHARS ? text.slice(0, PREVIEW_CHARS - 1) + "…" : text;
    out.push({ seq, label: `#${seq} · ${who}: ${cut}` });
  }
  return out.reverse();
}

/** The form. */
export function RollbackForm({ sessionKey, entries }: RollbackFormProps) {
  const [seq, setSeq] = useState<number | null>(null);
  const [confirming, setConfirming] = useState(false);
  const [sending, setSending] = useState(false);
  const [result, setResult] = useState<{ ok: boolean; text: string } | null>(null);
  const targets = rollbackTargets(entries);
  const chosen = targets.find((t) => t.seq === seq) ?? null;

  const run = async () => {
    if (!chosen || sending) return;
    setSending(true);
    setResult(null);
    try {
      const r = await rollbackSession(sessionKey, chosen.seq);
      setResult({
        ok: true,
        text: r.applied
          ? `Rolled back: #${r.to_seq} is now the last message`
          : `Rollback to #${r.to_seq} queued — applied at the next turn`,
      });
      setSeq(null);
    } catch (err) {
      setResult({ ok: false, text: (err as Error).message });
    } finally {
      setSending(false);
      setConfirming(false);
    }
  };
  const onChange = (e: Event) => {
    const v = (e.currentTarget as HTMLSelectElement).value;
    setSeq(v === "" ? null : Number(v));
    setConfirming(false);
    setResult(null);
  };

  if (!targets.length) return null;
  const status = result &&
    (result.ok
      ? html`<span class="action-status" role="status">${result.text}</span>`
      : html`<span class="err" role="alert">${result.text}</span>`);
  const confirm = confirming && chosen &&
    html`<p class="rollback-confirm" role="alert">
      Keep messages up to #${chosen.seq}; every later message is superseded.
      <button type="button" class="btn small danger" id="confirm-rollback" onClick=${run}
        disabled=${sending}>${sending ? "Rolling back…" : "Confirm rollback"}</button>
      <button type="button" class="btn small ghost" onClick=${() => setConfirming(false)}>
        Cancel</button>
    </p>`;
  return html`<div class="control-panel rollback">
    <label class="control-h" for="rollback-seq">Roll the conversation back to a message</label>
    <div class="control-row">
      <select id="rollback-seq" class="control-text" onChange=${onChange}
        value=${seq === null ? "" : String(seq)} disabled=${sending}>
        <option value="">Choose the last message to keep…</option>
        ${targets.map((t) => html`<option key=${t.seq} value=${String(t.seq)}>${t.label}</option>`)}
      </select>
      <button type="button" class="btn" id="start-rollback" disabled=${!chosen || sending}
        onClick=${() => setConfirming(true)}>Roll back…</button>
    </div>
    ${confirm} ${status}
  </div>`;
}
