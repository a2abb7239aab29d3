/**
 * Whether a CSS media query matches, kept current as the window changes (a phone turned
 * sideways, a resized window). Used where layout is more than CSS can do: the coverage
 * panel starts collapsed on narrow screens.
 */
import { useEffect, useState } from "preact/hooks";

/** True while `query` matches. */
export function useMedia(query: string): boolean {
  const [matches, setMatches] = useState(() => matchMedia(query).matches);
  useEffect(() => {
    const mq = matchMedia(query);
    const on = () => setMatches(mq.matches);
    on();
    mq.addEventListener("change", on);
    return () => mq.removeEventListener("change", on);
  }, [query]);
  return matches;
}
