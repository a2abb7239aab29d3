/**
 * The current hash route, updated on `hashchange`. Navigation is plain `location.hash`
 * assignment (links are ordinary `<a href="#/…">`), so Back and Forward just work.
 */
import { useEffect, useState } from "preact/hooks";
import { parseRoute, type Route } from "../lib/route.ts";

/** The route, live. */
export function useHashRoute(): Route {
  const [route, setRoute] = useState(() => parseRoute(location.hash));
  useEffect(() => {
    const on = () => setRoute(parseRoute(location.hash));
    addEventListener("hashchange", on);
    return () => removeEventListener("hashchange", on);
  }, []);
  return route;
}

/** Goes to a hash href (`#/…`). */
export function navigate(href: string): void {
  location.hash = href.slice(1);
}
