/**
 * What a visitor without a valid token is told, in one place: the JSON body of an API 401
 * (the dashboard renders it when its cookie stops working, e.g. after `intendant token
 * --rotate`) and the HTML page `/` serves instead of the app when there is no valid
 * cookie or the `?token=` is wrong. Both say the same thing: run `intendant url`, or read
 * the link from daemon.json.
 *
 * The page reuses the dashboard's own stylesheet (the `<style>` block of the built
 * index.html, ui/styles.css: the `.auth-*` rules live there), so it looks like the app;
 * API-only builds (no bundle) fall back to a few inline rules. Inline styles are allowed
 * by the app's CSP (`style-src 'self' 'unsafe-inline'`); scripts only from 'self', so the
 * page's one script is the dashboard bundle (/app.js, whenever a bundle is embedded —
 * which is when `css` is set): on this page it mounts nothing and only keeps a shared
 * link's target (ui/lib/link_target.ts — one same-site reload when a cross-site click
 * left the fresh cookie behind, and the fragment remembered for the tokenized link opened
 * next). Without JavaScript the page reads the same. The tag says `data-page="token"`, so
 * it never reads as the dashboard's own `<script type="module" src="/app.js">` (tests tell
 * the app from this page by it). Every interpolated value is HTML-escaped.
 */

/** The command that prints the current tokenized URL. */
export const URL_COMMAND = "intendant url";

/** Why the visitor is not let in. */
export type TokenProblem = "missing" | "invalid";

/** The machine-readable part of a 401 (also the dashboard's source for its message). */
export interface TokenHelp {
  error: "unauthorized";
  reason: TokenProblem;
  /** The page's heading. */
  title: string;
  /** The page's first paragraph: why the visitor is not let in. */
  lead: string;
  /** One sentence for people and logs (scripts read this one). */
  message: string;
  /** The command to run. */
  command: string;
  /** Where the URL and token are written (home shortened to `~`), when known. */
  daemon_json: string | null;
}

/** The help for `reason`. */
export function tokenHelp(reason: TokenProblem, daemonJson: string | null): TokenHelp {
  const where = daemonJson ? ` (or read "url" and "token" from ${daemonJson})` : "";
  const what = reason === "missing"
    ? "This dashboard needs its access link"
    : "This access link is no longer valid (the token was rotated, or the link is mistyped)";
  return {
    error: "unauthorized",
    reason,
    title: reason === "missing"
      ? "Open Intendant with its access link"
      : "This link is no longer valid",
    lead: reason === "missing"
      ? "The dashboard opens only through its tokenized link, so other local programs and web pages cannot read your conversations."
      : "Its token does not match the daemon's: the token was rotated (intendant token --rotate) or the link is mistyped.",
    message: `${what}: run \`${URL_COMMAND}\`${where} and open the link it prints; ` +
      "scripts send Authorization: Bearer <token>",
    command: URL_COMMAND,
    daemon_json: daemonJson,
  };
}

/** `path` with a leading `home` shown as `~` (what a user would type). */
export function displayPath(path: string, home: string): string {
  const h = home.replace(/\/+$/, "");
  return h && (path === h || path.startsWith(h + "/")) ? "~" + path.slice(h.length) : path;
}

function esc(s: string): string {
  return s.replace(/[&<>"']/g, (ch) => `&#${ch.charCodeAt(0)};`);
}

const FALLBACK_CSS =
  "body{margin:0;font:15px/1.45 system-ui,sans-serif;background:#f6f7f9;color:#1b1d22}" +
  ".auth-page{min-height:100vh;display:grid;place-items:center;padding:24px}" +
  ".auth-card{max-width:560px;background:#fff;border:1px solid #dde0e6;border-radius:10px;padding:20px 24px}" +
  ".auth-cmd{display:block;padding:8px 12px;border-radius:6px;background:#eceefe;font-family:ui-monospace,monospace}";

/** The dashboard's stylesheet, taken from the built page; null when there is none. */
export function dashboardCss(uiHtml: string | undefined): string | null {
  if (!uiHtml) return null;
  return /<style>([\s\S]*?)<\/style>/.exec(uiHtml)?.[1]?.trim() ?? null;
}

/**
 * The full HTML page for a visitor without a valid token. `script`: the bundle to load
 * (see the module header). @default "/app.js" when `css` is the bundle's stylesheet
 */
export function tokenPage(
  help: TokenHelp,
  css: string | null,
  { script = css === null ? null : "/app.js" }: { script?: string | null } = {},
): string {
  const where = help.daemon_json
    ? `<p>Or read <code>url</code> and <code>token</code> from <code class="auth-path">${
      esc(help.daemon_json)
    }</code>.</p>`
    : "";
  return `<!doctype html><html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="color-scheme" content="light dark"><meta name="referrer" content="no-referrer">
<title>Intendant: access link needed</title><link rel="icon" href="data:,">
<style>${css ?? FALLBACK_CSS}</style></head>
<body><main class="auth-page" data-auth="${help.reason}"><section class="auth-card" role="alert">
<h1>${esc(help.title)}</h1><p class="muted">${esc(help.lead)}</p>
<p>Get the current link by running:</p><code class="auth-cmd">${esc(help.command)}</code>
${where}</section></main>${
    script ? `<script type="module" src="${esc(script)}" data-page="token"></script>` : ""
  }</body></html>`;
}
