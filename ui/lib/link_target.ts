/**
 * A shared link keeps its target through the token page. A link is
 * `http://127.0.0.1:P/?token=…#/session/<key>?locate=…`: the fragment never reaches the
 * server, which trades `?token=` for the HttpOnly SameSite=Strict cookie and redirects to
 * `/` (the browser carries the fragment over the redirect). Two ways it used to be lost:
 *
 *  - Opened from another site (a chat, a mail, a tracker), the navigation is cross-site,
 *    and a Strict cookie is not sent on any request of a cross-site redirect chain — even
 *    the one it was just set on: `/` answers the token page ("missing"), the fragment
 *    still in the address bar. A navigation that page starts itself is same-site, so the
 *    token page (it loads this bundle; the CSP allows no inline script) loads itself again
 *    once, fragment kept, and the cookie goes along. Only a page reached through a
 *    redirect does (the token trade is the only redirect to it: the Navigation Timing
 *    entry's redirectCount), and the retry itself is no redirect: never a loop, and a
 *    plain visit without a cookie is not reloaded.
 *  - Opened without any cookie, the token page shows; the user runs `intendant url` and
 *    opens the link it prints, which has no fragment. So the token page also remembers
 *    the fragment (localStorage, this origin only, for TARGET_TTL_MS), and the dashboard,
 *    mounting on its home view within that time, opens the remembered target instead,
 *    once. A dashboard that mounts on any other route drops it.
 *
 * Only `#/…` fragments (the dashboard's routes) are kept; storage a browser refuses just
 * leaves the old behaviour. No token ever passes through here: the page's own address
 * after the redirect holds none.
 */

/** localStorage key of the remembered target. */
export const TARGET_KEY = "intendant.linkTarget";
/** How long a remembered target waits for the tokenized link. */
export const TARGET_TTL_MS = 10 * 60_000;

/** The storage the target is kept in (localStorage, or a fake in tests). */
export type LinkStore = Pick<Storage, "getItem" | "setItem" | "removeItem">;

/** True for a fragment that names a dashboard view other than the plain home. */
function isTarget(hash: string): boolean {
  return hash.startsWith("#/") && hash !== "#/" && hash.length <= 4096;
}

/**
 * On the token page: remembers a target fragment and, when the cookie was missing right
 * after a redirect (see the module header), answers the address to load instead (else
 * null): the same path and fragment with an empty query — the "?" makes it a navigation,
 * not a same-document jump to the fragment, so the browser asks the server again, and, the
 * page having started it, sends the cookie.
 */
export function tokenPageStep(
  page: { hash: string; reason: string | null; path: string; redirected: boolean },
  store: LinkStore | null,
  now: number,
): string | null {
  if (store && isTarget(page.hash)) {
    try {
      store.setItem(TARGET_KEY, JSON.stringify({ hash: page.hash, at: now }));
    } catch {
      // Storage refused (or full): the retry below still keeps the fragment.
    }
  }
  return page.reason === "missing" && page.redirected ? `${page.path}?${page.hash}` : null;
}

/**
 * When the dashboard mounts: the fragment to open instead of `hash` (a remembered target,
 * fresh, and the page opened on the home view), or null. Consumes the target either way.
 */
export function takeLinkTarget(hash: string, store: LinkStore, now: number): string | null {
  let saved: { hash?: unknown; at?: unknown } | null = null;
  try {
    const raw = store.getItem(TARGET_KEY);
    if (raw === null) return null;
    store.removeItem(TARGET_KEY);
    saved = JSON.parse(raw);
  } catch {
    return null; // storage refused or a garbled entry: nothing to restore
  }
  const home = hash === "" || hash === "#" || hash === "#/";
  const fresh = typeof saved?.at === "number" && now - saved.at >= 0 &&
    now - saved.at < TARGET_TTL_MS;
  return home && fresh && typeof saved?.hash === "string" && isTarget(saved.hash)
    ? saved.hash
    : null;
}

/** The address without the retry's empty query ("/?#/x" → "/#/x"), or null when it has none. */
export function withoutRetryMark(href: string): string | null {
  const at = href.indexOf("#");
  const base = at < 0 ? href : href.slice(0, at);
  return base.endsWith("?") ? base.slice(0, -1) + (at < 0 ? "" : href.slice(at)) : null;
}
