/**
 * The vault over HTTP (issue 29): `GET /api/vault` (what `intendant vault status --json`
 * prints: per source, the budget, the agents' cleanups) and `POST /api/vault/restore`
 * (`{"session": KEY}`: the dashboard's Restore button on a gone session; the same
 * restore as `intendant vault restore` without --to). Both sit behind the app's
 * token/Host/Origin middleware; the vault is an optional dependency (`RouteDeps.vault`,
 * built by the daemon), absent → 404 `vault_off`.
 * Decisions:
 *  - No `to` over HTTP: a browser must not choose where on disk files land. The files go
 *    back only to the exact paths the agent reads, under the source's current homes, and
 *    never over an existing file (400 with the sentence, as the CLI's exit 2).
 *  - The answer names the files and the resume command, never their content: the vault is
 *    a backup of raw transcripts (secrets included) and nothing in it is served raw.
 */
import type { Context } from "hono";
import { z } from "zod";
import { InvalidInputError } from "../errors.ts";
import type { VaultReport } from "../vault/mod.ts";
import type { RouteDef, RouteDeps } from "./routes.ts";

/** What the daemon gives the app for the vault. */
export interface VaultDeps {
  report(): Promise<VaultReport>;
  restore(session: string): Promise<{
    key: string;
    files: { path: string; bytes: number }[];
    resume: string;
    note: string | null;
  }>;
}

const RestoreBody = z.object({ session: z.string().min(1).max(300) }).strict();

function vaultOf(c: Context, d: RouteDeps): VaultDeps | Response {
  if (d.vault) return d.vault;
  return c.json({
    error: "vault_off",
    message: "The vault is off (INTENDANT_VAULT=off): nothing is kept to restore",
  }, 404);
}

export const VAULT_ROUTES: readonly RouteDef[] = [
  {
    method: "GET",
    path: "/api/vault",
    operation: "api_vault_status",
    body: "none",
    summary:
      "the transcript vault: sessions, files, bytes kept per source, the disk budget, and the agents' own cleanups (`vault status --json`)",
    handler: async (c, d) => {
      const v = vaultOf(c, d);
      return v instanceof Response ? v : c.json(await v.report());
    },
  },
  {
    method: "POST",
    path: "/api/vault/restore",
    operation: "api_vault_restore",
    body: "json",
    summary:
      'write a kept session back where its agent reads it ({"session": key}), never over a file; answers the files and the resume command',
    handler: async (c, d) => {
      const v = vaultOf(c, d);
      if (v instanceof Response) return v;
      const body = RestoreBody.safeParse(await c.req.json().catch(() => null));
      if (!body.success) throw new InvalidInputError('Expected a JSON body {"session": string}');
      return c.json(await v.restore(body.data.session));
    },
  },
];
