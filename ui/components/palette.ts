/**
 * The ⌘K / Ctrl+K command palette: a modal dialog with a combobox input over one
 * listbox holding two groups — Sessions (the server-side session filter over the whole
 * catalog; the most recent when the query is empty) and Messages (message search with
 * include_superseded=false, when available). Fully keyboard-driven: ArrowUp/ArrowDown
 * move one selection across both groups (aria-activedescendant, so focus never leaves
 * the input and Home/End still edit it), Enter opens (a session → its detail; a message
 * → the detail anchored on the hit); useModal closes on Escape and traps Tab, and focus
 * returns to where it was when the palette closes (App owns that). A row under the input
 * holds the messages' "Best match | Newest" switch (issue 27, outside the listbox): the same `sort` as the home view's
 * (App keeps it in the URL), so the palette and the lane ask for the same order; a
 * related hit carries a "related" badge, and a question of only common words says so in
 * one line. Keys on a button of the palette are the button's (Enter presses it, it does
 * not open the selected option).
 */
import { html } from "htm/preact";
import { useEffect, useMemo, useRef, useState } from "preact/hooks";
import type { SearchSort, SessionSummary } from "../api_client.ts";
import { navigate } from "../hooks/use_hash_route.ts";
import { useModal } from "../hooks/use_modal.ts";
import { useSearchLane } from "../hooks/use_search_lane.ts";
import { useSessions } from "../hooks/use_sessions.ts";
import { detailQuery, ONLY_COMMON_TEXT } from "../lib/relevance.ts";
import { sessionHref } from "../lib/route.ts";
import { optionId, type PaletteItem, PaletteOption } from "./palette_option.ts";
import { SortToggle } from "./sort_toggle.ts";

const SESSIONS_MAX = 6;
const MESSAGES_MAX = 10;
const MESSAGE_GROUPS = 8;

/** Props of {@link Palette}. */
export interface PaletteProps {
  sessions: readonly SessionSummary[];
  messageLane: boolean;
  onClose(): void;
  /** The message order (the home view's; absent: newest). */
  sort?: SearchSort;
  /** Changes it (absent: no switch). */
  onSort?(sort: SearchSort): void;
}

/** The palette. */
export function Palette({ sessions, messageLane, onClose, sort = "newest", onSort }: PaletteProps) {
  const [q, setQ] = useState("");
  const [sel, setSel] = useState(0);
  const input = useRef<HTMLInputElement>(null);
  const dialog = useRef<HTMLDivElement>(null);
  const query = q.trim();
  const lane = useSearchLane(
    messageLane && query
      ? {
        q: query,
        includeSuperseded: false,
        source: [],
        role: [],
        ...(sort === "relevance" ? { sort: "relevance" as const } : {}),
      }
      : null,
    MESSAGE_GROUPS,
  );
  const st = lane.state;
  const shownQ = st.shownQuery?.q ?? "";
  const linkQ = detailQuery(shownQ, st.queryTerms);
  const filtered = useSessions({
    source: [],
    q: query,
    firstPage: SESSIONS_MAX,
    enabled: query !== "",
  });
  const found = query ? filtered.sessions : sessions;
  const items: PaletteItem[] = useMemo(() => {
    const ss = found.slice(0, SESSIONS_MAX).map((s): PaletteItem => ({
      kind: "session",
      s,
      href: sessionHref(s.key),
    }));
    const ms = st.groups.flatMap((g) =>
      g.hits.map((h): PaletteItem => ({
        kind: "message",
        g,
        h,
        href: sessionHref(g.session_key, { locate: h.locator, q: linkQ }),
      }))
    );
    return [...ss, ...ms.slice(0, MESSAGES_MAX)];
  }, [found, st.groups, linkQ]);
  const nSessions = items.findIndex((i) => i.kind === "message");
  const split = nSessions < 0 ? items.length : nSessions;
  const current = Math.max(0, Math.min(sel, items.length - 1));

  useModal(dialog, input, onClose);
  useEffect(() => setSel(0), [query, st.groups]);
  const currentId = optionId(current);
  useEffect(() => {
    document.getElementById(currentId)?.scrollIntoView({ block: "nearest" });
  }, [currentId]);

  const pick = (o: PaletteItem | undefined) => {
    if (!o) return;
    onClose();
    navigate(o.href);
  };
  const onKeyDown = (e: KeyboardEvent) => {
    if (e.target instanceof HTMLButtonElement) return; // Enter/Space press the button
    const n = items.length;
    const moves: Record<string, number> = {
      ArrowDown: (current + 1) % Math.max(n, 1),
      ArrowUp: (current - 1 + n) % Math.max(n, 1),
    };
    if (e.key === "Enter") pick(items[current]);
    else if (e.key in moves) setSel(moves[e.key]!);
    else return;
    e.preventDefault();
  };
  const option = (item: PaletteItem, index: number) =>
    html`
      <${PaletteOption} key=${index} item=${item} index=${index} selected=${index === current}
        onHover=${setSel} onPick=${pick} />
    `;
  const busy = st.status === "loading";
  const heading = busy ? "Messages — searching…" : "Messages";
  const onlyCommon = st.queryTerms?.only_common === true && !st.groups.length;
  const messages = messageLane && html`
    <div role="group" aria-labelledby="pal-g-m"
      aria-busy=${String(busy)} data-q=${shownQ}>
        <div id="pal-g-m" class="pal-h" role="presentation">${heading}</div>
        ${onlyCommon && html`<div class="pal-empty only-common">${ONLY_COMMON_TEXT}</div>`}
        ${items.slice(split).map((o, i) => option(o, i + split))}
      </div>
  `;
  // Outside the listbox (which may hold only options): a row under the input.
  const tools = messageLane && onSort && html`
    <div class="pal-tools">
      <span class="pal-tools-label">Messages</span>
      <${SortToggle} sort=${sort} onSort=${onSort} />
    </div>
  `;
  const empty = !items.length && !onlyCommon &&
    html`<div class="pal-empty">${query ? "Nothing matches." : "No sessions yet."}</div>`;
  const closeIfBackdrop = (e: MouseEvent) => e.target === e.currentTarget && onClose();
  const onInput = (e: Event) => setQ((e.currentTarget as HTMLInputElement).value);
  const active = items.length ? optionId(current) : undefined;

  return html`
    <div class="backdrop" onClick=${closeIfBackdrop}>
      <div ref=${dialog} class="palette" role="dialog" aria-modal="true" aria-label="Command palette"
        onKeyDown=${onKeyDown}>
        <div class="pal-input">
          <input ref=${input} type="text" role="combobox" aria-expanded="true"
            aria-controls="pal-list"
            aria-autocomplete="list" aria-activedescendant=${active} value=${q}
            onInput=${onInput}
            aria-label="Search sessions and messages" placeholder="Jump to a session or message…" />
          <button type="button" class="icon-btn" aria-label="Close palette" onClick=${onClose}>
              Esc
            </button>
        </div>
        ${tools}
        <div role="listbox" id="pal-list" class="pal-list" aria-label="Sessions and messages">
            <div role="group" aria-labelledby="pal-g-s">
              <div id="pal-g-s" class="pal-h" role="presentation">Sessions</div>
              ${items.slice(0, split).map(option)}
            </div>
            ${messages} ${empty}
          </div>
      </div>
    </div>
  `;
}
