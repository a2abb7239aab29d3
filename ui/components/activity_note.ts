/**
 * One calm line near the top of an external session's detail when its tool calls are not
 * all shown (lib/activity_text.ts): why none are ("Tool calls are not shown: …" — OpenCode
 * and Goose keep them in database rows the detail does not read; a file was missing,
 * refused or gone), or that some could not be read, with the files not read whole in a
 * closed list (path, reason in words, the code in the tooltip). Without it a session whose
 * calls were never read looked like one that made none. Nothing when they are all there.
 */
import { html } from "htm/preact";
import type { ActivityStatus } from "../api_client.ts";
import { activityLine } from "../lib/activity_text.ts";

/** The line (or nothing) for `activity`. */
export function ActivityNote({ activity }: { activity: ActivityStatus | null | undefined }) {
  const line = activityLine(activity);
  if (!line) return null;
  const files = line.files.length > 0 && html`
    <details class="activity-files">
      <summary>${line.files.length === 1
        ? "Which file"
        : `Which ${line.files.length} files`}</summary>
      <ul>
        ${line.files.map((f) => html`<li title=${f.code}><code>${f.file}</code>: ${f.why}</li>`)}
      </ul>
    </details>
  `;
  return html`
    <div class="activity-note" data-activity=${line.state} role="note">
      <p>${line.text}</p>
      ${files}
    </div>
  `;
}
