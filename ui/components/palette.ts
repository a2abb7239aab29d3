/**
 * The ⌘K / Ctrl+K command palette: a modal dialog with a combobox input over one
 * listbox holding two groups — Sessions (the server-side session filter over the whole
 * catalog; the most recent when the query is empty) and Messages (message search with
 * include_superseded=false, when available). Fully keyboard-driven: ArrowUp/ArrowDown
 * move one selection across both groups (aria-activedescendant, so focus never leaves
 * the input and Home/End still edit it), Enter opens (a session → its detail; a message
 * → the detail anchored on the hit); useModal closes on Escape and traps Tab, and focus
 * returns to where it was when the palette closes (App owns that).
 */
import { html } from "htm/preact";
import { useEffect, useMemo, useRef, useState } from "preact/hooks";
import type { SessionSummary } from "../api_client.ts";
import { navigate } from "../hooks/use_hash_route.ts";
import { useModal } from "../hooks/use_modal.ts";
import { useSearchLane } from "../hooks/use_search_lane.ts";
import { useSessions } from "../hooks/use_sessions.ts";
import { sessionHref } from "../lib/route.ts";
import { optionId, type PaletteItem, PaletteOption } from "./palette_option.ts";

const SESSIONS_MAX = 6;
const MESSAGES_MAX = 10;
const MESSAGE_GROUPS = 8;

/** Props of {@link Palette}. */
export interface PaletteProps {
  sessions: readonly SessionSummary[];
  messageLane: boolean;
  onClose(): void;
}

/** The palette. */
export function Palette({ sessions, messageLane, onClose }: PaletteProps) {
  const [q, setQ] = useState("");
  const [sel, setSel] = useState(0);
  const input = useRef<HTMLInputElement>(null);
  const dialog = useRef<HTMLDivElement>(null);
  const query = q.trim();
  const lane = useSearchLane(
    messageLane && query ? { q: query, includeSuperseded: false, source: [], role: [] } : null,
    MESSAGE_GROUPS,
  );
  const st = lane.state;
  const shownQ = st.shownQuery?.q ?? "";
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
        href: sessionHref(g.session_key, { locate: h.locator, q: shownQ }),
      }))
    );
    return [...ss, ...ms.slice(0, MESSAGES_MAX)];
  }, [found, st.groups, shownQ]);
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
  const messages = messageLane && html`
    <div role="group" aria-labelledby="pal-g-m"
      aria-busy=${String(busy)} data-q=${shownQ}>
        <div id="pal-g-m" class="pal-h" role="presentation">${heading}</div>
        ${items.slice(split).map((o, i) => option(o, i + split))}
      </div>
  `;
  const empty = !items.length &&
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
