/**
 * The vault half of `intendant secrets`: every kept version of every file of every
 * catalog in the transcript vault (Vault.list, Vault.bytesOf: each object verified
 * against its hash), scanned with the same masker and masked exactly as the index's
 * findings are (secrets_audit.ts maskedFindings). The vault keeps what the agents wrote
 * — tool output and all, and sessions their agent deleted — so a secret can be there
 * and nowhere in the index.
 * How a version is read: chunk by chunk, split into lines (the kept files are JSONL; a
 * line is the masker's unit, so a key is never cut by a chunk edge). A line that parses
 * as JSON is scanned string by string (a key inside a JSON string is not hidden by its
 * escapes); any other line as it is, with JSON's escapes read as spaces. A line longer
 * than LINE_MAX_BYTES is scanned in windows that overlap by LINE_OVERLAP_BYTES, so
 * memory stays bounded. One finding per distinct occurrence in a file, listing every
 * version that holds it (a rewrite keeps its predecessors; the same key is in both).
 * Invariants: nothing leaves this module unmasked (findings hold maskedForm and masked
 * excerpts, paths and ids only); `complete` is true only when every catalog and every
 * object of every version was read — a damaged catalog or object is listed in
 * `unreadable`, and the versions after it in the same file are still read. Reads only.
 */
import type { Catalog, Vault, Version } from "../vault/mod.ts";
import { type Fs, realFs } from "../durable/mod.ts";
import { type MaskedFinding, maskedFindings } from "./secrets_audit.ts";
import { concatBytes } from "../text/mod.ts";

/** A line longer than this is scanned in overlapping windows (memory stays bounded). */
export const LINE_MAX_BYTES = 4 << 20;
/** Bytes two windows of one long line share: longer than any key the masker knows. */
export const LINE_OVERLAP_BYTES = 4096;

/** One secret in one kept file, masked, and the versions that hold it. */
export interface VaultFinding extends MaskedFinding {
  /** The kept file's path (where its agent wrote it) and its role in the session. */
  file: string;
  file_role: string;
  /** 1-based line of its first occurrence, in the first version listed. */
  line: number;
  /** Every version holding it: 1-based number, when kept, and whether it is the last. */
  versions: { version: number; kept_ms: number; changed_ms: number; last: boolean }[];
}

/** One kept session that holds secrets. */
export interface VaultSessionSecrets {
  session_key: string;
  source: string;
  session_id: string;
  /**
   * Every file of the session is gone from its place: the vault holds the only copy. Marked
   * in the catalog, or missing now (one lstat each: a session no index held is marked gone
   * by no sweep).
   */
  gone: boolean;
  kinds: Record<string, number>;
  findings: VaultFinding[];
}

/** What could not be read: a catalog (by file), or one version of one file. */
export interface VaultUnreadable {
  session_key: string | null;
  file: string | null;
  version: number | null;
  reason: string;
}

/** The vault's audit. */
export interface VaultSecretsAudit {
  dir: string;
  complete: boolean;
  sessions_scanned: number;
  versions_scanned: number;
  bytes_scanned: number;
  sessions: VaultSessionSecrets[];
  unreadable: VaultUnreadable[];
}

/** Audits every kept version in `vault`. */
export async function auditVaultSecrets(
  vault: Pick<Vault, "dir" | "list" | "bytesOf">,
  o: { onProgress?: (done: number, total: number) => void; fs?: Fs } = {},
): Promise<VaultSecretsAudit> {
  const fs = o.fs ?? realFs;
  const out: VaultSecretsAudit = {
    dir: vault.dir,
    complete: true,
    sessions_scanned: 0,
    versions_scanned: 0,
    bytes_scanned: 0,
    sessions: [],
    unreadable: [],
  };
  const { catalogs, damaged } = await vault.list();
  for (const d of damaged) {
    out.unreadable.push({ session_key: null, file: null, version: null, reason: d });
  }
  for (const [i, c] of catalogs.entries()) {
    o.onProgress?.(i, catalogs.length);
    const s = await auditCatalog(vault, c, out);
    out.sessions_scanned++;
    if (s) out.sessions.push({ ...s, gone: await allGone(fs, c) });
  }
  o.onProgress?.(catalogs.length, catalogs.length);
  out.complete = out.unreadable.length === 0;
  // Newest kept first: the copy kept last is the one most likely holding a live key.
  const newest = (s: VaultSessionSecrets) =>
    Math.max(...s.findings.flatMap((f) => f.versions.map((v) => v.changed_ms)));
  out.sessions.sort((a, b) => newest(b) - newest(a) || a.session_key.localeCompare(b.session_key));
  return out;
}

async function auditCatalog(
  vault: Pick<Vault, "bytesOf">,
  c: Catalog,
  out: VaultSecretsAudit,
): Promise<Omit<VaultSessionSecrets, "gone"> | null> {
  const findings: VaultFinding[] = [];
  for (const f of c.files) {
    const byOccurrence = new Map<string, VaultFinding>();
    for (const [vi, v] of f.versions.entries()) {
      const version = { version: vi + 1, kept_ms: v.kept_ms, changed_ms: v.changed_ms };
      const last = vi === f.versions.length - 1;
      try {
        for await (const { line, found } of scanVersion(vault, v)) {
          for (const m of found) {
            const id = `${m.kind}\0${m.masked}\0${m.excerpt}`;
            const seen = byOccurrence.get(id);
            if (seen) {
              if (!seen.versions.some((x) => x.version === version.version)) {
                seen.versions.push({ ...version, last });
              }
              continue;
            }
            const vf: VaultFinding = {
              ...m,
              file: f.path,
              file_role: f.role,
              line,
              versions: [{ ...version, last }],
            };
            byOccurrence.set(id, vf);
          }
        }
        out.versions_scanned++;
        out.bytes_scanned += v.size;
      } catch (err) {
        out.unreadable.push({
          session_key: c.key,
          file: f.path,
          version: version.version,
          reason: err instanceof Error ? err.message : String(err),
        });
      }
    }
    findings.push(...byOccurrence.values());
  }
  if (findings.length === 0) return null;
  const kinds: Record<string, number> = {};
  for (const f of findings) kinds[f.kind] = (kinds[f.kind] ?? 0) + 1;
  return {
    session_key: c.key,
    source: c.source,
    session_id: c.session_id,
    kinds,
    findings,
  };
}

async function allGone(fs: Fs, c: Catalog): Promise<boolean> {
  for (const f of c.files) {
    if (f.gone_ms !== null) continue;
    try {
      await fs.lstat(f.path);
      return false;
    } catch (err) {
      if (!(err instanceof Deno.errors.NotFound)) throw err;
    }
  }
  return c.files.length > 0;
}

/** The findings of one version, line by line (see the header). */
async function* scanVersion(
  vault: Pick<Vault, "bytesOf">,
  v: Version,
): AsyncGenerator<{ line: number; found: MaskedFinding[] }> {
  const dec = new TextDecoder();
  let buf: Uint8Array = new Uint8Array(0);
  let line = 1;
  for await (const chunk of vault.bytesOf(v)) {
    buf = concatBytes([buf, chunk]);
    let nl: number;
    while ((nl = buf.indexOf(0x0a)) >= 0) {
      const found = scanLine(dec.decode(buf.subarray(0, nl)));
      if (found.length) yield { line, found };
      buf = buf.subarray(nl + 1);
      line++;
    }
    // A line past the bound: scan what is here, keep an overlap for the rest of it.
    if (buf.length > LINE_MAX_BYTES) {
      const found = scanLine(dec.decode(buf));
      if (found.length) yield { line, found };
      buf = buf.slice(buf.length - LINE_OVERLAP_BYTES);
    }
  }
  if (buf.length > 0) {
    const found = scanLine(dec.decode(buf));
    if (found.length) yield { line, found };
  }
}

function scanLine(text: string): MaskedFinding[] {
  if (text.trim() === "") return [];
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    // Not a JSON line (a pretty-printed file's fragment, a torn tail): as it is, with
    // JSON's escapes read as spaces so `\nAKIA…` still starts a key.
    return maskedFindings(text.replace(/\\[nrtbf"\\/]/g, " "));
  }
  const out: MaskedFinding[] = [];
  for (const s of stringsOf(parsed)) out.push(...maskedFindings(s));
  return out;
}

/** Every string (keys and values) of a parsed JSON value, depth-first. */
function* stringsOf(x: unknown): Generator<string> {
  if (typeof x === "string") yield x;
  else if (Array.isArray(x)) { for (const y of x) yield* stringsOf(y); }
  else if (x !== null && typeof x === "object") {
    for (const [k, y] of Object.entries(x)) {
      yield k;
      yield* stringsOf(y);
    }
  }
}
