/**
 * Previous/next hit inside one session. The hit list is the server's (`hits`: every
 * entry of the whole session whose text holds every query term, search's fold) plus the
 * live tail's new entries that match (checked here with the same fold), so stepping
 * reaches hits outside the loaded page: the window moves onto the target first
 * (DetailModel.loadAround), then the entry is scrolled under the sticky bars and
 * focused. `current` starts on the located entry and follows every step; keys `n` / `p`
 * step too, unless focus is in a text field or a modifier is held.
 */
import { useEffect, useMemo, useRef, useState } from "preact/hooks";
import { foldText, matchesAll } from "../lib/fold.ts";
import { scrollToEntry } from "../lib/scroll_to_entry.ts";
import type { DetailModel } from "./use_detail.ts";

/** The hit navigation state. */
export interface HitNav {
  /** Total indices of the session's hits, ascending. */
  hits: number[];
  /** False when the server's scan stopped at its bound (more hits may exist). */
  complete: boolean;
  /** The entry shown as current (the located one, then each stepped-to hit). */
  current: number | null;
  /** 1-based position of `current` among the hits; 0 when it is not a hit. */
  position: number;
  prev: number | null;
  next: number | null;
  busy: boolean;
  go(step: 1 | -1): void;
}

function editable(t: EventTarget | null): boolean {
  const el = t as HTMLElement | null;
  return !!el?.closest?.("input, textarea, select, [contenteditable]") || !!el?.isContentEditable;
}

/** Navigation over `d`'s hits for `terms`, starting at `anchor`. */
export function useHitNav(d: DetailModel, terms: readonly string[], anchor: number | null): HitNav {
  const [moved, setMoved] = useState<number | null>(null);
  const [busy, setBusy] = useState(false);
  const [scrollTarget, setScrollTarget] = useState<number | null>(null);
  const firstTotal = useRef<number | null>(null);
  const tail = useRef(new Set<number>());
  const data = d.data;
  if (data && firstTotal.current === null) firstTotal.current = data.total;

  const hits = useMemo(() => {
    if (!data?.hits) return [];
    const from = firstTotal.current ?? data.total;
    for (const e of data.entries) {
      if (e.index >= from && e.text && matchesAll(foldText(e.text), terms)) {
        tail.current.add(e.index);
      }
    }
    return [...new Set([...data.hits, ...tail.current])].sort((a, b) => a - b);
  }, [data?.hits, data?.entries, terms.join("\u0000")]);

  const current = moved ?? anchor;
  const next = hits.find((h) => current === null || h > current) ?? null;
  let prev: number | null = null;
  for (const h of hits) if (current === null || h < current) prev = h;

  const go = async (step: 1 | -1) => {
    const target = step > 0 ? next : prev;
    if (target === null || busy) return;
    setBusy(true);
    try {
      await d.loadAround(target);
      setMoved(target);
      setScrollTarget(target);
    } finally {
      setBusy(false);
    }
  };
  const goRef = useRef(go);
  goRef.current = go;

  useEffect(() => {
    if (scrollTarget === null) return;
    setScrollTarget(null);
    scrollToEntry(document.getElementById(`entry-${scrollTarget}`));
  }, [scrollTarget, data]);

  useEffect(() => {
    if (!terms.length) return;
    const onKey = (e: KeyboardEvent) => {
      if (e.defaultPrevented || e.metaKey || e.ctrlKey || e.altKey || editable(e.target)) return;
      if (e.key !== "n" && e.key !== "p") return;
      e.preventDefault();
      void goRef.current(e.key === "n" ? 1 : -1);
    };
    addEventListener("keydown", onKey);
    return () => removeEventListener("keydown", onKey);
  }, [terms.length > 0]);

  return {
    hits,
    complete: data?.hits_complete !== false,
    current,
    position: current === null ? 0 : hits.indexOf(current) + 1,
    prev,
    next,
    busy,
    go: (step) => void go(step),
  };
}
