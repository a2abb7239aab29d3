/**
 * The dashboard root: hash routing between the recent view (kept mounted, so going back
 * is instant and keeps the query and scroll position) and a session's detail; the
 * shared catalog and search model; feature detection; the ⌘K / Ctrl+K palette (focus
 * returns to where it was when it closes). Marks the page `data-app-ready` once mounted.
 */
import { html } from "htm/preact";
import { useEffect, useRef, useState } from "preact/hooks";
import { useFeatures } from "../hooks/use_features.ts";
import { useHashRoute } from "../hooks/use_hash_route.ts";
import { useSessions } from "../hooks/use_sessions.ts";
import { HeaderBar } from "./header_bar.ts";
import { Palette } from "./palette.ts";
import { RecentView } from "./recent_view.ts";
import type { SearchModel } from "./search_toolbar.ts";
import { SessionView } from "./session_view.ts";

/** The app. */
export function App() {
  const route = useHashRoute();
  const features = useFeatures();
  const [search, setSearch] = useState<SearchModel>({
    q: "",
    sources: [],
    roles: [],
    includeSuperseded: false,
  });
  const sessions = useSessions(search.sources);
  const [palette, setPalette] = useState(false);
  const input = useRef<HTMLInputElement>(null);
  const returnFocus = useRef<HTMLElement | null>(null);
  const listScroll = useRef(0);
  const onList = route.name === "list";

  useEffect(() => {
    document.getElementById("app")?.setAttribute("data-app-ready", "");
    if (onList) input.current?.focus();
  }, []);

  useEffect(() => {
    const onKey = (e: KeyboardEvent) => {
      if ((e.metaKey || e.ctrlKey) && !e.altKey && e.key.toLowerCase() === "k") {
        e.preventDefault();
        openPalette();
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
  const paletteEl = palette && html`
    <${Palette} sessions=${sessions.sessions}
      messageLane=${features.messageSearch} onClose=${closePalette} />
  `;

  return html`<div class="shell">
    <a class="skip" href="#main" onClick=${skipToMain}>Skip to content</a>
    <${HeaderBar} onPalette=${openPalette} />
    <main id="main" tabindex="-1">
      <${RecentView} hidden=${!onList} sessions=${sessions} search=${search} onSearch=${setSearch}
        messageLane=${features.messageSearch} inputRef=${input} />
      ${detail}
    </main>
    ${paletteEl}
  </div>`;
}
