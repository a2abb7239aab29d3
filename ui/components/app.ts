/**
 * The dashboard root: hash routing between the recent view (kept mounted, so going back
 * is instant and keeps the query and scroll position) and a session's detail; the
 * shared catalog and search model; feature detection; the ⌘K / Ctrl+K palette (focus
 * returns to where it was when it closes); `/` jumps to the search box. Marks the page
 * `data-app-ready` once mounted.
 * The search model lives in the URL (lib/route.ts): typing and filter changes REPLACE the
 * history entry (Back leaves the dashboard's view instead of undoing keystrokes), opening
 * a session pushes one, and Back/Forward or a pasted link restores the query and filters.
 * Once the daemon refuses the page's token (api_client onAuthLost), the token help
 * replaces everything. With a team (`serve --team`, hooks/use_team.ts) the search can be
 * scoped to the team and `#/remote/<machine>/<key>` shows a remote session's prose. The
 * ⌘K palette's "Best match | Newest" switch edits the same model's `sort` as the lane's.
 * `data-features` on the shell says whether the daemon's features are known yet ("pending"
 * until /api/routes answers), so a test can tell "no lane" from "no lane yet".
 */
import { html } from "htm/preact";
import type { SearchSort } from "../api_client.ts";
import { useEffect, useRef, useState } from "preact/hooks";
import { useAuthLost } from "../hooks/use_auth_lost.ts";
import { useFeatures } from "../hooks/use_features.ts";
import { navigate, useHashRoute } from "../hooks/use_hash_route.ts";
import { useSessions } from "../hooks/use_sessions.ts";
import { useTeam } from "../hooks/use_team.ts";
import { EMPTY_LIST, listHref, rememberListHref, withSort } from "../lib/route.ts";
import { HeaderBar } from "./header_bar.ts";
import { Palette } from "./palette.ts";
import { RecentView } from "./recent_view.ts";
import { RemoteSessionView } from "./remote_session_view.ts";
import type { SearchModel } from "./search_toolbar.ts";
import { SessionView } from "./session_view.ts";
import { TokenNotice } from "./token_notice.ts";
import { UndoToast } from "./undo_toast.ts";

/** True when a key goes to a text field (where `/` is just a character). */
function typing(e: KeyboardEvent): boolean {
  const t = e.target as HTMLElement | null;
  return !!t && (t.isContentEditable || /^(INPUT|TEXTAREA|SELECT)$/.test(t.tagName));
}

/** Focuses `el` once it is laid out (the list view un-hides a frame or two after a route change). */
function focusWhenShown(el: { current: HTMLElement | null }, frames: number): void {
  requestAnimationFrame(() => {
    if (el.current?.offsetParent) el.current.focus();
    else if (frames > 0) focusWhenShown(el, frames - 1);
  });
}

/** The app. */
export function App() {
  const route = useHashRoute();
  const authLost = useAuthLost();
  const features = useFeatures();
  const team = useTeam();
  const [search, setSearchState] = useState<SearchModel>(
    route.name === "list" ? route.list : EMPTY_LIST,
  );
  const sessions = useSessions({ source: search.sources });
  const [palette, setPalette] = useState(false);
  const input = useRef<HTMLInputElement>(null);
  const searchRef = useRef(search);
  searchRef.current = search;
  const returnFocus = useRef<HTMLElement | null>(null);
  const listScroll = useRef(0);
  const onList = route.name === "list";

  // URL → model: Back/Forward, a pasted link, a link to `#/?…` (keyed by the href, so a
  // route object re-created for the same URL changes nothing).
  const routeList = route.name === "list" ? listHref(route.list) : null;
  useEffect(() => {
    if (route.name !== "list") return;
    setSearchState(route.list);
    rememberListHref(listHref(route.list));
  }, [routeList]);
  // Model → URL, without a history entry per keystroke.
  const setSearch = (next: SearchModel) => {
    setSearchState(next);
    const href = listHref(next);
    rememberListHref(href);
    if (onList && location.hash !== href && !(href === "#/" && location.hash === "")) {
      history.replaceState(history.state, "", `${location.pathname}${location.search}${href}`);
    }
  };

  useEffect(() => {
    document.getElementById("app")?.setAttribute("data-app-ready", "");
    if (onList) input.current?.focus();
  }, []);

  useEffect(() => {
    const onKey = (e: KeyboardEvent) => {
      if ((e.metaKey || e.ctrlKey) && !e.altKey && e.key.toLowerCase() === "k") {
        e.preventDefault();
        openPalette();
      } else if (e.key === "/" && !e.metaKey && !e.ctrlKey && !e.altKey && !typing(e)) {
        // `/` = search, from anywhere that is not a text field (the detail goes back to
        // the list it came from, which keeps its query).
        e.preventDefault();
        if (!document.getElementById("q")?.offsetParent) navigate(listHref(searchRef.current));
        focusWhenShown(input, 30);
      }
    };
    addEventListener("keydown", onKey);
    return () => removeEventListener("keydown", onKey);
  }, []);

  // Keep the list's scroll position across a visit to a detail page.
  const wasList = useRef(onList);
  useEffect(() => {
    if (wasList.current === onList) return;
    wasList.current = onList;
    if (onList) requestAnimationFrame(() => scrollTo(0, listScroll.current));
  }, [onList]);
  useEffect(() => {
    const save = () => wasList.current && (listScroll.current = scrollY);
    addEventListener("scroll", save, { passive: true });
    return () => removeEventListener("scroll", save);
  }, []);

  function openPalette() {
    if (document.querySelector(".palette")) return;
    returnFocus.current = document.activeElement as HTMLElement | null;
    setPalette(true);
  }
  const closePalette = () => {
    setPalette(false);
    const back = returnFocus.current;
    setTimeout(() => back?.isConnected && back.focus(), 0);
  };

  const skipToMain = (e: Event) => {
    e.preventDefault(); // the href is a fallback: a hash change would be a route
    document.getElementById("main")?.focus();
  };
  const renamed = (key: string, name: string | null) => sessions.patch(key, { name });
  const detail = route.name === "session" &&
    html`
      <${SessionView} key=${`${route.key}\n${route.locate ?? ""}`} sessionKey=${route.key}
        locate=${route.locate} q=${route.q} onRenamed=${renamed} />
    `;
  const remote = route.name === "remote" &&
    html`
      <${RemoteSessionView} key=${`${route.machine}\n${route.key}`} machine=${route.machine}
        sessionKey=${route.key} q=${route.q} />
    `;
  const paletteEl = palette && html`
    <${Palette} sessions=${sessions.sessions}
      messageLane=${features.messageSearch} onClose=${closePalette}
      sort=${search.sort ?? "newest"} onSort=${(v: SearchSort) => setSearch(withSort(search, v))} />
  `;

  // A refused token replaces the whole app: every panel would only fail the same way.
  if (authLost) return html`<${TokenNotice} help=${authLost} />`;

  return html`<div class="shell" data-features=${features.known ? "known" : "pending"}>
    <a class="skip" href="#main" onClick=${skipToMain}>Skip to content</a>
    <${HeaderBar} onPalette=${openPalette} />
    <main id="main" tabindex="-1">
      <${RecentView} hidden=${!onList} sessions=${sessions} search=${search} onSearch=${setSearch}
        messageLane=${features.messageSearch} inputRef=${input} team=${team} />
      ${detail}
      ${remote}
    </main>
    ${paletteEl}
    <${UndoToast} onChange=${sessions.reload} />
  </div>`;
}
