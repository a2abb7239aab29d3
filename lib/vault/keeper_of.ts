/**
 * The vault as a process wires it: a Keeper over `<state-root>/vault` that keeps the
 * sources whose row says their sessions are files (SOURCE_TABLE keep.kind "files"), or
 * null when INTENDANT_VAULT=off. Only the processes that sweep under the index's writer
 * lock with write access to the state root wire one: the daemon and `intendant index`
 * (MCP and one-shot searches leave keeping to them).
 */
import type { ResolvedConfig } from "../config.ts";
import { type SessionUnit, type Source, SOURCE_TABLE } from "../message_search/mod.ts";
import { Keeper } from "./keeper.ts";
import { Vault } from "./vault.ts";

/** True when the vault keeps `source`'s sessions as files. */
export function vaultKeeps(source: string): boolean {
  return SOURCE_TABLE[source as Source]?.keep.kind === "files";
}

/** The Keeper of `cfg`, or null when the vault is off. */
export function keeperOf(
  cfg: ResolvedConfig,
  o: { logger?: (line: string) => void; now?: () => number } = {},
): Keeper | null {
  if (!cfg.vault.enabled) return null;
  return new Keeper({
    vault: new Vault({ dir: cfg.vault.dir, now: o.now }),
    keeps: vaultKeeps,
    maxBytes: cfg.vault.maxBytes,
    logger: o.logger,
  });
}

/** The Indexer's onListed callback feeding `keeper`. */
export function listenerOf(
  keeper: Keeper | null,
): ((l: { units: readonly SessionUnit[]; gone: readonly string[] }) => void) | undefined {
  if (!keeper) return undefined;
  return (l) =>
    keeper.offer(
      l.units.map((u) => ({
        key: u.key,
        source: u.source,
        sessionId: u.sessionId,
        files: u.files,
      })),
      l.gone,
    );
}
