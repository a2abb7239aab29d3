/**
 * "Restore from the vault" on a session whose agent deleted its files (issue 29): one
 * POST /api/vault/restore, then what was written back and the command that resumes the
 * session, or the server's sentence (a file already in place is never overwritten; the
 * vault may be off or hold no copy). The files go back only to the paths the agent reads.
 */
import { html } from "htm/preact";
import { useState } from "preact/hooks";
import { restoreFromVault, type VaultRestored } from "../api_client.ts";
import { plural } from "../lib/format.ts";

/** Props of {@link VaultRestoreButton}. */
export interface VaultRestoreProps {
  sessionKey: string;
  onRestored?(r: VaultRestored): void;
}

/** The button and its outcome. */
export function VaultRestoreButton({ sessionKey, onRestored }: VaultRestoreProps) {
  const [state, setState] = useState<
    { kind: "idle" } | { kind: "busy" } | { kind: "done"; r: VaultRestored } | {
      kind: "error";
      message: string;
    }
  >({ kind: "idle" });
  const run = async () => {
    setState({ kind: "busy" });
    try {
      const r = await restoreFromVault(sessionKey);
      setState({ kind: "done", r });
      onRestored?.(r);
    } catch (err) {
      setState({ kind: "error", message: (err as Error).message });
    }
  };
  if (state.kind === "done") {
    const n = state.r.files.length;
    return html`<p class="vault-restored" role="status" data-testid="vault-restored">
      Restored ${plural(n, "file")} from the vault. Resume with <code>${state.r.resume}</code>
      ${state.r.note && html`<span class="muted"> (${state.r.note})</span>`}
    </p>`;
  }
  return html`<span class="vault-restore">
    <button type="button" data-testid="vault-restore" disabled=${state.kind === "busy"}
      title="Write the session's files back where its agent reads them (never over a file)"
      onClick=${run}>${state.kind === "busy" ? "Restoring…" : "Restore from the vault"}</button>
    ${state.kind === "error" && html`<span class="error" role="alert">${state.message}</span>`}
  </span>`;
}
