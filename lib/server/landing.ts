/**
 * The page `/` serves when no dashboard bundle is embedded (API-only builds): a plain
 * index of the JSON API from the declared route table, so what is listed is what exists.
 */
import type { RouteDef } from "./routes.ts";

function esc(s: string): string {
  return s.replace(/[&<>"']/g, (ch) => `&#${ch.charCodeAt(0)};`);
}

/** Renders the landing page. */
export function landingPage(routes: readonly RouteDef[]): string {
  const rows = routes.map((r) =>
    `<tr><td>${r.method}</td><td><code>${esc(r.path)}</code></td><td>${esc(r.summary)}</td></tr>`
  ).join("");
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Intendant</title></head>
<body><h1>Intendant</h1><p>JSON API (send <code>Authorization: Bearer &lt;token&gt;</code>, or open the tokenized URL once to get a cookie):</p>
<table><thead><tr><th>method</th><th>path</th><th>what</th></tr></thead><tbody>${rows}</tbody></table></body></html>`;
}
