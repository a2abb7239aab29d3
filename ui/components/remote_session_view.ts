/**
 * A remote session's page (team scope): what another machine published of the session
 * to the team database — its facts and its indexed prose in source order, paged ("load
 * more"). It is plainly marked "remote · <machine>": tool calls, context markers and the
 * session's controls live in that machine's own files and are not here (nor is rename,
 * resume or delete). Every text is rendered as text (MarkedText; never innerHTML),
 * masked while "Mask secrets" is on, with the query's words marked.
 */
import { html } from "htm/preact";
import { useMaskSecrets } from "../hooks/use_mask_secrets.ts";
import { useRemoteSession } from "../hooks/use_remote_session.ts";
import { findTerms, queryTerms } from "../lib/fold.ts";
import { plural } from "../lib/format.ts";
import { shownMessage, shownText, shownTitleText } from "../lib/masking.ts";
import { backToListHref } from "../lib/route.ts";
import type { RemoteRecord } from "../api_client.ts";
import { MarkedText } from "./marked_text.ts";
import { Notice } from "./notice.ts";
import { RelTime } from "./rel_time.ts";
import { SourceBadge } from "./source_badge.ts";

/** Props of {@link RemoteSessionView}. */
export interface RemoteSessionViewProps {
  machine: string;
  sessionKey: string;
  q: string | null;
}

const BACK = () => html`<a class="back" href=${backToListHref()}>← Sessions</a>`;
const REMOTE_NOTE = "Indexed prose published to the team database. Tool calls and live " +
  "controls stay on the machine that ran the session.";

function Row(
  { r, mask, terms }: { r: RemoteRecord; mask: boolean; terms: readonly string[] },
) {
  const shown = shownMessage(r.text, mask, terms);
  const cls = `entry remote-entry from-${r.role}${r.superseded ? " superseded" : ""}`;
  return html`
    <li class=${cls} data-record=${r.record_id}>
      <div class="entry-head">
        <span class=${`role role-${r.role}`}>${r.role}</span>
        <${RelTime} ms=${r.ts_ms} />
        ${r.superseded && html`<span class="badge sup">rewound</span>`}
        ${r.subagent && html`<span class="badge">subagent</span>`}
        ${r.truncated && html`<span class="badge">cut at the index cap</span>`}
      </div>
      <p class="remote-text">
        <${MarkedText} text=${shown.text}
          ranges=${findTerms(shown.text, shown.terms)} />
      </p>
    </li>
  `;
}

/** The page. */
export function RemoteSessionView({ machine, sessionKey, q }: RemoteSessionViewProps) {
  const m = useRemoteSession(machine, sessionKey);
  const mask = useMaskSecrets();
  const terms = q ? queryTerms(q) : [];
  if (!m.meta) {
    const status = m.error
      ? html`<${Notice} tone="error" text=${m.error} />`
      : html`<p class="muted" role="status">Loading remote session…</p>`;
    return html`<div class="view" aria-busy=${String(!m.error)}>${BACK()}${status}</div>`;
  }
  const meta = m.meta;
  const title = shownTitleText(meta.title ?? meta.session_id, mask);
  const left = m.total - m.records.length;
  const more = left > 0 && html`
    <button type="button" class="btn more" onClick=${m.loadMore} disabled=${m.loading}>
      ${m.loading ? "Loading…" : `Load more (${left} more)`}</button>
  `;
  return html`
    <article class="view detail remote" aria-labelledby="detail-h"
      data-machine=${machine}>
        <header class="detail-head">
          ${BACK()}
          <h1 id="detail-h" tabindex="-1">${title}</h1>
          <div class="card-meta">
            <${SourceBadge} source=${meta.source} />
            <span class="badge remote-badge">remote · ${machine}</span>
            ${meta.project && html`<span class="project">${shownText(meta.project, mask)}</span>`}
            <span><${RelTime} ms=${meta.newest_ts_ms} prefix="updated " /></span>
            <span>${plural(m.total, "message")}</span>
            ${meta.source_gone && html`<span class="badge warn">source file deleted</span>`}
          </div>
        </header>
        <${Notice} text=${REMOTE_NOTE} />
        ${m.error && html`<${Notice} tone="error" text=${m.error} />`}
        <ol class="timeline" aria-label="Remote session messages">
          ${m.records.map((r) =>
            html`<${Row} key=${r.record_id} r=${r} mask=${mask} terms=${terms} />`
          )}
        </ol>
        ${!m.records.length &&
          html`<p class="empty">No messages were published for this session.</p>`}
        ${more}
      </article>
  `;
}
