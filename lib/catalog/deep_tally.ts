/**
 * The `scanned` block of a Deep Search page: exactly what this page read, per source
 * (sessions, files, bytes; of those, from the vault), the files it could not read by
 * reason, the sessions it does not scan by design (database sources), and whether the
 * scan is complete or why this page stopped. Counts are of this page only: a client that
 * pages sums them (addDeepScanned; a session resumed into counts on each page that read
 * it). Imports types and lib/text only: the dashboard bundle uses it too.
 */
import type { Source } from "../message_search/mod.ts";
import type { StopReason } from "./deep_scan.ts";
import { formatBytes } from "../text/mod.ts";
import type { DeepScanned, DeepSourceTally } from "./types.ts";

/** Accumulates one page's tally. */
export class DeepTally {
  readonly out: DeepScanned = emptyDeepScanned();

  #of(source: Source): DeepSourceTally {
    return this.out.by_source[source] ??= {
      sessions: 0,
      files: 0,
      bytes: 0,
      vault_sessions: 0,
      vault_bytes: 0,
    };
  }

  /** A session's first file is about to be read. */
  session(source: Source, fromVault: boolean): void {
    this.out.sessions++;
    const t = this.#of(source);
    t.sessions++;
    if (fromVault) t.vault_sessions++;
  }

  /** A file was read: `bytes` of it. */
  file(source: Source, bytes: number, fromVault: boolean): void {
    this.out.files++;
    this.out.bytes += bytes;
    const t = this.#of(source);
    t.files++;
    t.bytes += bytes;
    if (fromVault) t.vault_bytes += bytes;
  }

  /** A file could not be read. */
  skip(reason: string, n = 1): void {
    this.out.skipped_files[reason] = (this.out.skipped_files[reason] ?? 0) + n;
  }

  /** The page's end. */
  finish(stopped: StopReason | null): DeepScanned {
    this.out.stopped = stopped;
    this.out.complete = stopped === null;
    return this.out;
  }
}

/**
 * A run's tally in words, one statement per line (our words only: no transcript text):
 * what was scanned per source and from the vault, which files could not be read and why,
 * what is not scanned by design. The CLI and the MCP tool say it the same way.
 */
export function describeDeepScan(s: DeepScanned, o: { hits: number }): string[] {
  const lines: string[] = [];
  const perSource = Object.entries(s.by_source).map(([src, t]) =>
    `${src} ${t!.sessions}${t!.vault_sessions ? ` (${t!.vault_sessions} from the vault)` : ""}`
  );
  lines.push(
    `deep search: ${o.hits} match${o.hits === 1 ? "" : "es"}; scanned ${s.sessions} sessions, ` +
      `${s.files} files, ${formatBytes(s.bytes)}${
        perSource.length ? ` (sessions by source: ${perSource.join(", ")})` : ""
      }${s.complete ? "; the scan is complete" : ""}`,
  );
  const skipped = Object.entries(s.skipped_files).map(([r, n]) => `${n} ${r}`);
  if (skipped.length) lines.push(`files not read: ${skipped.join(", ")}`);
  for (const n of s.not_scanned) {
    lines.push(`not scanned: ${n.source}, ${n.sessions} sessions: ${n.reason}`);
  }
  if (s.gone_unkept > 0) {
    lines.push(
      `not scanned: ${s.gone_unkept} sessions whose files their agent deleted before the ` +
        "vault kept them",
    );
  }
  return lines;
}

/** Sums one page's tally into a run's (a pager's: the CLI and the dashboard). */
export function addDeepScanned(into: DeepScanned, p: DeepScanned): void {
  into.sessions += p.sessions;
  into.files += p.files;
  into.bytes += p.bytes;
  for (const [s, t] of Object.entries(p.by_source)) {
    const a = into.by_source[s as keyof DeepScanned["by_source"]] ??= {
      sessions: 0,
      files: 0,
      bytes: 0,
      vault_sessions: 0,
      vault_bytes: 0,
    };
    a.sessions += t!.sessions;
    a.files += t!.files;
    a.bytes += t!.bytes;
    a.vault_sessions += t!.vault_sessions;
    a.vault_bytes += t!.vault_bytes;
  }
  for (const [r, n] of Object.entries(p.skipped_files)) {
    into.skipped_files[r] = (into.skipped_files[r] ?? 0) + n;
  }
  into.not_scanned = p.not_scanned;
  into.gone_unkept = p.gone_unkept;
  into.complete = p.complete;
  into.stopped = p.stopped;
}

/** A run's tally before its first page. */
export function emptyDeepScanned(): DeepScanned {
  return {
    sessions: 0,
    files: 0,
    bytes: 0,
    by_source: {},
    skipped_files: {},
    not_scanned: [],
    gone_unkept: 0,
    complete: false,
    stopped: null,
  };
}
