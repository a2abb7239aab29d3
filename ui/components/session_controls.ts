/**
 * The controls of a live native session, under its activity: the pending askHuman
 * question with its answer box (when there is one), steer, and rollback. Renders nothing
 * for an external session or an ended one (a status this build does not know counts as
 * ended: see lib/session_status.ts), so the controls vanish the moment the live view
 * learns the session finished. Each control talks to the daemon itself (api_client) and
 * keeps its result inline; what the runner then does arrives through the live stream.
 */
import { html } from "htm/preact";
import type { DetailEntry, PendingQuestion, SessionSummary } from "../api_client.ts";
import { isLiveStatus } from "../lib/session_status.ts";
import { PendingQuestionBox } from "./pending_question.ts";
import { RollbackForm } from "./rollback_form.ts";
import { SteerForm } from "./steer_form.ts";

/** Props of {@link SessionControls}. */
export interface SessionControlsProps {
  session: SessionSummary;
  pending: PendingQuestion | null;
  entries: readonly DetailEntry[];
}

/** True when the session gets controls. */
export function controllable(s: SessionSummary): boolean {
  return s.source === "intendant" && isLiveStatus(s.status);
}

/** The controls. */
export function SessionControls({ session: s, pending, entries }: SessionControlsProps) {
  if (!controllable(s)) return null;
  return html`<section class="session-controls" aria-label="Session controls">
    ${
    pending &&
    html`
      <${PendingQuestionBox} key=${pending.question_id} sessionKey=${s.key}
        pending=${pending} />
    `
  }
    <${SteerForm} sessionKey=${s.key} />
    <${RollbackForm} sessionKey=${s.key} entries=${entries} />
  </section>`;
}
