/**
 * The dashboard's notice of an agent's own cleanup (issue 29): "Claude Code deletes
 * sessions after 30 days …; 212 are kept in the vault" — the same sentence `serve`
 * prints at start, from GET /api/vault's `risks`. Asked once per page load (the figures
 * move by the day, not the second); nothing is shown when no agent deletes on its own,
 * when the vault is off (the route's 404), or after the user hides it (for this browser,
 * until the sentence changes).
 */
import { html } from "htm/preact";
import { useEffect, useState } from "preact/hooks";
import { fetchVault } from "../api_client.ts";

const HIDDEN_KEY = "intendant.vaultNotice.hidden";

function hiddenLine(): string | null {
  try {
    return localStorage.getItem(HIDDEN_KEY);
  } catch {
    return null;
  }
}

/** The notice (or nothing). */
export function VaultNotice() {
  const [lines, setLines] = useState<string[]>([]);
  const [hidden, setHidden] = useState<string | null>(hiddenLine);
  useEffect(() => {
    const ac = new AbortController();
    fetchVault(ac.signal).then((r) => setLines(r.risks.map((x) => x.line))).catch(() => {
      // Vault off, or an older daemon: no notice is the honest answer.
    });
    return () => ac.abort();
  }, []);
  const text = lines.join(" · ");
  if (!text || hidden === text) return null;
  const hide = () => {
    try {
      localStorage.setItem(HIDDEN_KEY, text);
    } catch { /* private mode: hidden for this page only */ }
    setHidden(text);
  };
  // Not a .notice: those belong to the result lanes (tests and styles address them).
  return html`
    <p class="vault-notice" role="status" data-testid="vault-notice">
      <span>${text}</span>
      <button type="button" class="link" onClick=${hide}>Hide</button>
    </p>
  `;
}
