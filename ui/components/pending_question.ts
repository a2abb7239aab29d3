/**
 * The answer box of a session blocked on askHuman: the question, a text area and "Send
 * answer" (Ctrl+Enter / ⌘+Enter too). The POST carries the question's id, so an answer
 * never lands on a newer question (the server answers 409 and the live view brings the
 * new one). Once the server took the answer the box gives way to a one-line status until
 * the session moves on (the next refetch drops pending_question and this unmounts; a new
 * question mounts a fresh box, keyed by its id). Errors stay inline; the text is kept.
 */
import { html } from "htm/preact";
import { useState } from "preact/hooks";
import { answerQuestion, type PendingQuestion } from "../api_client.ts";
import { useMaskSecrets } from "../hooks/use_mask_secrets.ts";
import { shownText } from "../lib/masking.ts";
import { RelTime } from "./rel_time.ts";

/** Id of the answer field (the "Answer" notice action focuses it). */
export const ANSWER_FIELD_ID = "answer-text";

/** Props of {@link PendingQuestionBox}. */
export interface PendingQuestionProps {
  sessionKey: string;
  pending: PendingQuestion;
}

/** The box. */
export function PendingQuestionBox({ sessionKey, pending: q }: PendingQuestionProps) {
  const [text, setText] = useState("");
  const mask = useMaskSecrets();
  const [sending, setSending] = useState(false);
  const [sent, setSent] = useState(false);
  const [error, setError] = useState<string | null>(null);

  const send = async () => {
    if (sending) return;
    if (!text.trim()) return setError("Write an answer first");
    setSending(true);
    setError(null);
    try {
      await answerQuestion(sessionKey, { text, questionId: q.question_id });
      setSent(true);
    } catch (err) {
      setError((err as Error).message);
    } finally {
      setSending(false);
    }
  };
  const onKeyDown = (e: KeyboardEvent) => {
    if (e.key !== "Enter" || !(e.ctrlKey || e.metaKey)) return;
    e.preventDefault();
    void send();
  };
  const onSubmit = (e: Event) => {
    e.preventDefault();
    void send();
  };

  if (sent) {
    return html`<p class="control-panel ask-sent" role="status">
      Answer sent — the agent continues once it picks it up.
    </p>`;
  }
  const question = q.question_truncated && !q.question
    ? html`<p class="muted">The question is too long to show here; it is in the activity above.</p>`
    : html`<p class="ask-question">${shownText(q.question, mask)}${
      q.question_truncated ? html`<span class="muted"> (truncated)</span>` : null
    }</p>`;
  return html`<form class="control-panel ask" aria-labelledby="ask-h" onSubmit=${onSubmit}>
    <h2 id="ask-h" class="control-h">
      The agent is waiting for your answer <${RelTime} ms=${q.asked_ms} prefix="· asked " />
    </h2>
    ${question}
    <label class="sr-only" for=${ANSWER_FIELD_ID}>Your answer</label>
    <textarea id=${ANSWER_FIELD_ID} class="control-text" rows="3" placeholder="Your answer"
      value=${text} disabled=${sending} onInput=${(e: Event) =>
    setText((e.currentTarget as HTMLTextAreaElement).value)}
      onKeyDown=${onKeyDown}></textarea>
    <div class="control-row">
      <button type="submit" class="btn primary" id="send-answer" disabled=${sending}>
        ${sending ? "Sending…" : "Send answer"}
      </button>
      <span class="muted hint">Ctrl+Enter sends</span>
      ${error && html`<span class="err" role="alert">${error}</span>`}
    </div>
  </form>`;
}
