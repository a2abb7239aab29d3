/**
 * One session as a card: source badge, title (the name when renamed) linking to the
 * detail, inline rename, status, project, start/updated times, message count and the
 * source_gone marker. In the message lane the same card carries the group's facts (best
 * hit time, total hits) and its hits as children. `terms` highlights the metadata-lane
 * match in the title, project and id.
 */
import { html } from "htm/preact";
import type { ComponentChildren } from "preact";
import { useState } from "preact/hooks";
import type { SearchGroup, SessionSummary, Source } from "../api_client.ts";
import { findTerms } from "../lib/fold.ts";
import { plural } from "../lib/format.ts";
import { sessionTitle } from "../lib/markdown.ts";
import { sessionHref } from "../lib/route.ts";
import { MarkedText } from "./marked_text.ts";
import { RelTime } from "./rel_time.ts";
import { RenameField } from "./rename_field.ts";
import { SourceBadge } from "./source_badge.ts";

/** Props of {@link SessionCard}. */
export interface SessionCardProps {
  sessionKey: string;
  source: Source;
  summary: SessionSummary | null;
  group?: SearchGroup;
  terms?: readonly string[];
  onRenamed(key: string, name: string | null): void;
  children?: ComponentChildren;
}

const GONE_TIP = "The source files are gone; the index still serves them";

/** A session card. */
export function SessionCard(props: SessionCardProps) {
  const { sessionKey, source, summary, group, terms = [], onRenamed, children } = props;
  // A rename shows at once even when the catalog has not loaded this session.
  const [renamed, setRenamed] = useState<{ name: string | null } | null>(null);
  const name = renamed ? renamed.name : summary?.name ?? null;
  const id = summary?.session_id ?? group?.session_id ?? sessionKey;
  const plainTitle = summary?.title ?? group?.title ?? null;
  const title = sessionTitle({ name, title: plainTitle, session_id: id });
  const project = summary?.project ?? group?.project ?? null;
  const gone = summary?.source_gone ?? group?.source_gone ?? false;
  const headId = `t-${group ? "g" : "s"}-${sessionKey.replace(/[^\w-]/g, "_")}`;
  const mark = (text: string) =>
    html`<${MarkedText} text=${text} ranges=${findTerms(text, terms)} />`;
  const rename = (n: string | null) => {
    setRenamed({ name: n });
    onRenamed(sessionKey, n);
  };

  const status = summary?.status &&
    html`<span class=${`status status-${summary.status}`}>${summary.status}</span>`;
  const goneBadge = gone && html`<span class="badge warn" title=${GONE_TIP}>source gone</span>`;
  const facts = group
    ? html`
      <span><${RelTime} ms=${group.best_ts_ms} prefix="best hit " /></span>
      <span>${plural(group.total_hits, "hit")}</span>
    `
    : summary && html`
      <span><${RelTime} ms=${summary.created_ms} prefix="started " /></span>
      <span><${RelTime} ms=${summary.updated_ms} prefix="updated " /></span>
      <span>${plural(summary.message_count, "message")}</span>
    `;
  return html`<article class=${gone ? "card gone" : "card"} aria-labelledby=${headId}>
    <div class="card-head">
      <${SourceBadge} source=${source} />
      <a class="card-title" id=${headId} href=${sessionHref(sessionKey)}>${mark(title)}</a>
      <${RenameField} sessionKey=${sessionKey} name=${name} fallback=${plainTitle ?? id}
        onRenamed=${rename} />
      ${status} ${goneBadge}
    </div>
    <div class="card-meta">
      ${project && html`<span class="project" title=${project}>${mark(project)}</span>`}
      ${facts}
      <span class="sid" title=${sessionKey}>${mark(id)}</span>
    </div>
    ${children}
  </article>`;
}
