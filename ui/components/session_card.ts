/**
 * One session as a card: source badge, title (the name when renamed), status, project,
 * start/updated times, message count, a short id, and the "source file deleted" marker.
 * The WHOLE card is the link to the detail: the title's link stretches over the card
 * (CSS `.card-link::after`), so a click anywhere opens it, while the real interactive
 * children (hit links, the id's copy button) sit above that layer and keep their own
 * targets; for keyboards and screen readers there is still exactly one link per card,
 * named by the title. Ids show as their first 8 characters (the full id is the tooltip
 * and what the copy button copies). Renaming lives in the detail header, not on every
 * card. In the message lane the same card carries the group's facts (best hit time,
 * total hits) and its hits as children. `terms` highlights a filter's match. The title
 * and project are masked while "Mask secrets" is on (a first prompt holding a key makes
 * a title holding it). A team group's card (`machine` set) carries a "remote · machine"
 * badge and links to `href`, the remote session's page. A related group of a relevance
 * page (issue 27) is a dashed card with a "related · …" badge (lib/relevance.ts); an exact
 * group and every newest-page group look as they always did.
 */
import { html } from "htm/preact";
import type { ComponentChildren } from "preact";
import { useState } from "preact/hooks";
import type { SearchGroup, SessionSummary, Source } from "../api_client.ts";
import { findTerms } from "../lib/fold.ts";
import { plural, shortId } from "../lib/format.ts";
import { useMaskSecrets } from "../hooks/use_mask_secrets.ts";
import { shownText, shownTitle } from "../lib/masking.ts";
import { relatedLabel, relatedTip } from "../lib/relevance.ts";
import { sessionHref } from "../lib/route.ts";
import { MarkedText } from "./marked_text.ts";
import { RelTime } from "./rel_time.ts";
import { SourceBadge } from "./source_badge.ts";

/** Props of {@link SessionCard}. */
export interface SessionCardProps {
  sessionKey: string;
  source: Source;
  summary: SessionSummary | null;
  group?: SearchGroup;
  terms?: readonly string[];
  children?: ComponentChildren;
  /** A team group's machine (shown as a badge); null/absent for this machine's sessions. */
  machine?: string | null;
  /** The card's link instead of the local detail (a team group's remote session). */
  href?: string;
}

export const GONE_LABEL = "source file deleted";
const GONE_TIP = "The session's own files are gone; the index still serves what it said";

/** The id as a copy button: short text, full id in the tooltip and the clipboard. */
function IdButton({ id }: { id: string }) {
  const [copied, setCopied] = useState<"idle" | "copied" | "shown">("idle");
  const copy = async (e: Event) => {
    e.preventDefault();
    try {
      await navigator.clipboard.writeText(id);
      setCopied("copied");
    } catch {
      setCopied("shown"); // no clipboard: show the whole id, selectable
    }
    setTimeout(() => setCopied("idle"), 2_000);
  };
  if (copied === "shown") return html`<span class="sid sid-full">${id}</span>`;
  return html`
    <button type="button" class="sid" title=${`${id} — click to copy`}
      aria-label=${`Copy session id ${id}`} onClick=${copy}>${copied === "copied"
        ? "copied ✓"
        : shortId(id)}</button>
  `;
}

/** A session card. */
export function SessionCard(props: SessionCardProps) {
  const { sessionKey, source, summary, group, terms = [], children, machine = null } = props;
  const name = summary?.name ?? null;
  const id = summary?.session_id ?? group?.session_id ?? sessionKey;
  const plainTitle = summary?.title ?? group?.title ?? null;
  const mask = useMaskSecrets();
  const title = shownTitle({ name, title: plainTitle, session_id: shortId(id) }, mask);
  const rawProject = summary?.project ?? group?.project ?? null;
  const project = rawProject === null ? null : shownText(rawProject, mask);
  const gone = summary?.source_gone ?? group?.source_gone ?? false;
  const headId = `t-${group ? "g" : "s"}-${
    (machine === null ? sessionKey : `${machine}-${sessionKey}`).replace(/[^\w-]/g, "_")
  }`;
  const mark = (text: string) =>
    html`<${MarkedText} text=${text} ranges=${findTerms(text, terms)} />`;

  const status = summary?.status &&
    html`<span class=${`status status-${summary.status}`}>${summary.status}</span>`;
  const goneBadge = gone && html`<span class="badge warn" title=${GONE_TIP}>${GONE_LABEL}</span>`;
  const machineBadge = machine !== null &&
    html`<span class="badge machine" title=${`Published by machine ${machine}`}>${machine}</span>`;
  const related = relatedLabel(group?.relevance);
  const relatedBadge = related &&
    html`<span class="badge related" title=${relatedTip(group!.relevance!)}>${related}</span>`;
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
  const cls = ["card", gone && "gone", related && "related"].filter(Boolean).join(" ");
  return html`
    <article class=${cls} aria-labelledby=${headId}
      data-tier=${group?.relevance?.tier}>
        <div class="card-head">
          <${SourceBadge} source=${source} />
          ${machineBadge}
          ${relatedBadge}
          <a class="card-title card-link" id=${headId} href=${props.href ?? sessionHref(sessionKey)}
            data-result="">${mark(title)}</a>
          ${status} ${goneBadge}
        </div>
        <div class="card-meta">
          ${project && html`<span class="project" title=${project}>${mark(project)}</span>`}
          ${facts}
          <${IdButton} id=${id} />
        </div>
        ${children}
      </article>
  `;
}
