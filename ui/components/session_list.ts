/**
 * The recent-sessions list, newest first, rendered from the first page as soon as it
 * arrives. More pages load incrementally when the sentinel below the last card scrolls
 * into view (IntersectionObserver), with a plain "Load more" button as the keyboard and
 * fallback path. Cards use `content-visibility: auto`, so thousands stay cheap to lay out.
 * A source filter set in the toolbar is named above the list with a way to clear it, so
 * the list never looks complete while it is filtered.
 */
import { html } from "htm/preact";
import { useEffect, useRef } from "preact/hooks";
import type { SessionSummary, Source } from "../api_client.ts";
import type { SessionsModel } from "../hooks/use_sessions.ts";
import { SOURCE_LABEL } from "../lib/sources.ts";
import { Notice } from "./notice.ts";
import { SessionCard } from "./session_card.ts";

/** Props of {@link SessionList}. */
export interface SessionListProps {
  model: SessionsModel;
  /** The toolbar's source filter (empty: every source). */
  sources: readonly Source[];
  onClearSources(): void;
}

/** Pixels below the viewport at which the next page starts loading. */
const PRELOAD_MARGIN = "600px 0px";

/** The list. */
export function SessionList({ model, sources, onClearSources }: SessionListProps) {
  const sentinel = useRef<HTMLDivElement>(null);
  const more = useRef(model.loadMore);
  more.current = model.loadMore;
  useEffect(() => {
    const el = sentinel.current;
    if (!el || typeof IntersectionObserver === "undefined") return;
    const io = new IntersectionObserver((es) => {
      if (es.some((e) => e.isIntersecting)) more.current();
    }, { rootMargin: PRELOAD_MARGIN });
    io.observe(el);
    return () => io.disconnect();
  }, [model.hasMore]);

  const { sessions, total, loading, error } = model;
  const count = total === null
    ? "Loading…"
    : `${sessions.length.toLocaleString()} of ${total.toLocaleString()}`;
  const card = (s: SessionSummary) =>
    html`
      <li key=${s.key} class="card-item">
        <${SessionCard} sessionKey=${s.key} source=${s.source} summary=${s} />
      </li>
    `;
  const retry = { label: "Retry", run: model.loadMore };
  const moreLabel = loading ? "Loading…" : "Load more sessions";
  const pager = model.hasMore && html`
    <div ref=${sentinel} class="sentinel" aria-hidden="true" />
    <button type="button" class="btn more" onClick=${model.loadMore}
      disabled=${loading}>${moreLabel}</button>
  `;

  return html`<section class="lane" aria-labelledby="recent-h" aria-busy=${String(loading)}>
    <div class="lane-head">
      <h2 id="recent-h">Recent sessions</h2>
      <span class="lane-status" role="status">${count}</span>
    </div>
    ${
    sources.length > 0 && html`<p class="filter-note" role="note">
      Only ${sources.map((x) => SOURCE_LABEL[x]).join(", ")} sessions are listed.
      <button type="button" class="btn small ghost" onClick=${onClearSources}>Show every source</button>
    </p>`
  }
    ${error && html`<${Notice} tone="error" text=${error} action=${retry} />`}
    ${total === 0 && html`<p class="empty">No sessions yet.</p>`}
    <ul class="cards" role="list" aria-label="Recent sessions" id="recent-list">
      ${sessions.map(card)}
    </ul>
    ${pager}
  </section>`;
}
