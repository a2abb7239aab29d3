/**
 * A session's detail page: the header (rename, resume, export), the jump-to-hit notice,
 * and the replayed activity, paged (load earlier / later) and live for a running native
 * session. Jump-to-hit: when the server resolved the hit's locator, the anchored entry
 * is scrolled to the middle of the viewport, focused, and highlighted (class,
 * aria-current, the query's words marked); a stale or unavailable locator opens the page
 * unanchored with the server's reason.
 */
import { html } from "htm/preact";
import { useEffect, useRef } from "preact/hooks";
import type { LocateResult } from "../api_client.ts";
import { useDetail } from "../hooks/use_detail.ts";
import { queryTerms } from "../lib/fold.ts";
import { DetailHeader } from "./detail_header.ts";
import { EntryRow } from "./entry_row.ts";
import { Notice } from "./notice.ts";

/** Props of {@link SessionView}. */
export interface SessionViewProps {
  sessionKey: string;
  locate: string | null;
  q: string | null;
  onRenamed(key: string, name: string | null): void;
}

/** The notice a locate result deserves, if any. */
export function locateText(l: LocateResult | null): { text: string; tone: "info" | "warn" } | null {
  if (l?.state === "stale") {
    return {
      tone: "warn",
      text: `This hit's source changed since it was indexed (${l.reason}); ` +
        "the session opens from the start.",
    };
  }
  if (l?.state === "unavailable") {
    return {
      tone: "warn",
      text: `The hit could not be located (${l.reason}); the session opens from the start.`,
    };
  }
  if (l?.state === "resolved" && l.anchor === "nearest") {
    return { tone: "info", text: "Jumped to the closest entry for this hit." };
  }
  return null;
}

const BACK = html`<a class="back" href="#/">← Sessions</a>`;

/** The page. */
export function SessionView({ sessionKey, locate, q, onRenamed }: SessionViewProps) {
  const d = useDetail(sessionKey, locate);
  const data = d.data;
  const anchor = data?.locate?.state === "resolved" ? data.locate.total_index : null;
  const terms = q ? queryTerms(q) : [];
  const jumped = useRef(false);
  useEffect(() => {
    if (!data || jumped.current) return;
    jumped.current = true;
    const el = anchor === null ? null : document.getElementById(`entry-${anchor}`);
    if (el) {
      el.scrollIntoView({ block: "center" });
      el.focus({ preventScroll: true });
    } else {
      scrollTo(0, 0);
      document.getElementById("detail-h")?.focus();
    }
  }, [data, anchor]);

  if (!data) {
    const status = d.error
      ? html`<${Notice} tone="error" text=${d.error} />`
      : html`<p class="muted" role="status">Loading session…</p>`;
    return html`<div class="view" aria-busy=${String(!d.error)}>${BACK}${status}</div>`;
  }
  const end = data.offset + data.entries.length;
  const located = locateText(data.locate);
  const renamed = (name: string | null) => {
    d.patchSession({ name });
    onRenamed(sessionKey, name);
  };
  const pager = (which: "earlier" | "later", count: number, run: () => void) => {
    const label = d.busy === which ? "Loading…" : `Load ${which} (${count} more)`;
    return html`
      <button type="button" class="btn more" onClick=${run}
        disabled=${d.busy !== null}>${label}</button>
    `;
  };
  const rows = data.entries.map((e) =>
    html`<${EntryRow} key=${e.index} entry=${e} anchored=${e.index === anchor} terms=${terms} />`
  );

  return html`<article class="view detail" aria-labelledby="detail-h">
    <${DetailHeader} session=${data.session} total=${data.total} live=${d.live}
      loadAll=${d.loadAll} onRenamed=${renamed} />
    ${located && html`<${Notice} tone=${located.tone} text=${located.text} />`}
    ${d.error && html`<${Notice} tone="error" text=${d.error} />`}
    ${data.offset > 0 && pager("earlier", data.offset, d.loadEarlier)}
    <ol class="timeline" aria-label="Session activity" start=${data.offset + 1}>${rows}</ol>
    ${!data.entries.length && html`<p class="empty">This session has no activity to show.</p>`}
    ${end < data.total && pager("later", data.total - end, d.loadLater)}
  </article>`;
}
