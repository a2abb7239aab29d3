/**
 * The token help, full page: what the app shows instead of itself once a request is
 * refused for want of a valid token. Same markup and classes (`.auth-*`, ui/styles.css) as
 * the page the server answers `/` with (lib/server/token_page.ts), and the server's own
 * words from the 401 body: run `intendant url`, or read the link from daemon.json.
 */
import { html } from "htm/preact";
import type { TokenHelp } from "../api_client.ts";

/** The notice. */
export function TokenNotice({ help }: { help: TokenHelp }) {
  const where = help.daemon_json &&
    html`<p>Or read <code>url</code> and <code>token</code> from <code class="auth-path">${help.daemon_json}</code>.</p>`;
  return html`
    <main class="auth-page" data-auth=${help.reason}>
      <section class="auth-card" role="alert">
          <h1>${help.title}</h1>
          <p class="muted">${help.lead}</p>
          <p>Get the current link by running:</p>
          <code class="auth-cmd">${help.command}</code>
          ${where}
        </section>
    </main>
  `;
}
