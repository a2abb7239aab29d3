/**
 * The dashboard's entry point (bundled by build.ts into /app.js): mounts the app into
 * #app. The page (index.html) loads this as an external module script, since the CSP
 * allows no inline script. The server's token page (lib/server/token_page.ts) loads it
 * too, for one job only: keeping a shared link's target through it (lib/link_target.ts:
 * one same-site reload when a cross-site click left the fresh cookie behind, and the
 * fragment remembered for the tokenized link opened next); there nothing is mounted.
 */
import { html } from "htm/preact";
import { render } from "preact";
import { App } from "./components/app.ts";
import {
  type LinkStore,
  takeLinkTarget,
  tokenPageStep,
  withoutRetryMark,
} from "./lib/link_target.ts";

function store(): LinkStore | null {
  try {
    // Reading the property itself throws where storage is refused.
    const s: LinkStore = globalThis.localStorage;
    return s;
  } catch {
    return null; // storage refused (a sandboxed frame): no target is remembered
  }
}

const tokenPage = document.querySelector<HTMLElement>("main[data-auth]");
const root = document.getElementById("app");
if (tokenPage) {
  const nav = performance.getEntriesByType("navigation")[0] as
    | PerformanceNavigationTiming
    | undefined;
  const next = tokenPageStep(
    {
      hash: location.hash,
      reason: tokenPage.dataset.auth ?? null,
      path: location.pathname,
      redirected: (nav?.redirectCount ?? 0) > 0,
    },
    store(),
    Date.now(),
  );
  if (next) location.replace(next);
} else if (root) {
  const clean = withoutRetryMark(location.href);
  if (clean) history.replaceState(history.state, "", clean);
  const s = store();
  const target = s && takeLinkTarget(location.hash, s, Date.now());
  if (target) {
    history.replaceState(history.state, "", location.pathname + location.search + target);
  }
  render(html`<${App} />`, root);
}
