/**
 * A session's detail page: the header (rename, resume, export), the jump-to-hit notice,
 * and the replayed activity, paged (load earlier / later) and live for a live (running
 * or waiting) native session, whose controls (answer, steer, rollback) follow the
 * activity, announced at the top while a question waits. Jump-to-hit: when the server
 * resolved the hit's locator, the anchored entry is scrolled to the middle of the
 * viewport, focused, and highlighted (class, aria-current, the query's words marked); a
 * stale or unavailable locator opens the page unanchored with the server's reason.
 * Opened from a hit (`q`), a sticky hit bar keeps the session in view and steps through
 * every hit of the session (hit_bar.ts); the entry it lands on becomes the anchored one,
 * and every loaded hit row has the words marked. An external session whose tool calls could
 * not all be read says so in one line under the header (activity_note.ts).
 */
import { html } from "htm/preact";
import { useEffect, useRef } from "preact/hooks";
import type { LocateResult } from "../api_client.ts";
import { useDetail } from "../hooks/use_detail.ts";
import { useHitNav } from "../hooks/use_hit_nav.ts";
import { queryTerms } from "../lib/fold.ts";
import { scrollToEntry } from "../lib/scroll_to_entry.ts";
import { ActivityNote } from "./activity_note.ts";
import { DetailHeader } from "./detail_header.ts";
import { EntryRow } from "./entry_row.ts";
import { HitBar } from "./hit_bar.ts";
import { Notice } from "./notice.ts";
import { ANSWER_FIELD_ID } from "./pending_question.ts";
import { controllable, SessionControls } from "./session_controls.ts";
import { backToListHref } from "../lib/route.ts";

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
  if (l?.state === "resolved" && l.anchor === "nearest" && !l.same_message) {
    return { tone: "info", text: "Jumped to the closest entry for this hit." };
  }
  return null;
}

const BACK = () => html`<a class="back" href=${backToListHref()}>← Sessions</a>`;

/** Brings the answer box (under the activity) into view. */
const ANSWER_ACTION = {
  label: "Answer",
  run: () => {
    const field = document.getElementById(ANSWER_FIELD_ID);
    field?.scrollIntoView({ block: "center" });
    field?.focus({ preventScroll: true });
  },
};

/** The page. */
export function SessionView({ sessionKey, locate, q, onRenamed }: SessionViewProps) {
  const d = useDetail(sessionKey, locate, q);
  const data = d.data;
  const anchor = data?.locate?.state === "resolved" ? data.locate.total_index : null;
  const terms = q ? queryTerms(q) : [];
  const nav = useHitNav(d, terms, anchor);
  const jumped = useRef(false);
  useEffect(() => {
    if (!data || jumped.current) return;
    jumped.current = true;
    const el = anchor === null ? null : document.getElementById(`entry-${anchor}`);
    if (el) scrollToEntry(el);
    else {
      scrollTo(0, 0);
      document.getElementById("detail-h")?.focus();
    }
  }, [data, anchor]);

  if (!data) {
    const status = d.error
      ? html`<${Notice} tone="error" text=${d.error} />`
      : html`<p class="muted" role="status">Loading session…</p>`;
    return html`<div class="view" aria-busy=${String(!d.error)}>${BACK()}${status}</div>`;
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
  const hitSet = new Set(nav.hits);
  const rows = data.entries.map((e) => {
    const current = e.index === nav.current;
    const marked = current || hitSet.has(e.index) ? terms : [];
    return html`<${EntryRow} key=${e.index} entry=${e} anchored=${current} terms=${marked} />`;
  });

  const waiting = data.pending && controllable(data.session) &&
    html`
      <${Notice} tone="warn" text="The agent is waiting for your answer."
        action=${ANSWER_ACTION} />
    `;
  return html`<article class="view detail" aria-labelledby="detail-h">
    <${DetailHeader} session=${data.session} total=${data.total} live=${d.live}
      loadAll=${d.loadAll} onRenamed=${renamed} />
    ${q && data.hits && html`<${HitBar} session=${data.session} q=${q} nav=${nav} />`}
    <${ActivityNote} activity=${data.activity} />
    ${located && html`<${Notice} tone=${located.tone} text=${located.text} />`}
    ${waiting}
    ${d.error && html`<${Notice} tone="error" text=${d.error} />`}
    ${data.offset > 0 && pager("earlier", data.offset, d.loadEarlier)}
    <ol class="timeline" aria-label="Session activity" start=${data.offset + 1}>${rows}</ol>
    ${!data.entries.length && html`<p class="empty">This session has no activity to show.</p>`}
    ${end < data.total && pager("later", data.total - end, d.loadLater)}
    <${SessionControls} key=${sessionKey} session=${data.session} pending=${data.pending}
      entries=${data.entries} />
  </article>`;
}
