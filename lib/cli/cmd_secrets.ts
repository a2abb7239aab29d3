/**
 * `intendant secrets [--json] [--refresh]`: audits the whole message index for secrets
 * pasted into conversations, so the user knows what to rotate. Per session: which kinds,
 * how many, and each occurrence MASKED (first characters + kind) with its role, time and
 * a dashboard link that opens the message (`#/session/<key>?locate=<locator>`; the
 * browser needs the dashboard's cookie, set once by `intendant url`'s link).
 * Invariants: a secret is never printed in full (only lib/secrets' masked forms and
 * masked excerpts reach stdout); every transcript string goes through terminalSafe (text)
 * or stringifyTerminalSafe (--json); "no secrets found" is said only after the whole
 * index was read — damaged shards are named instead. The store is read in this process
 * (a daemon's warm arena has nothing the store lacks); `--refresh` sweeps first. Exit 0.
 * The transcript vault is audited too (secrets_vault_audit.ts: every kept version, also of
 * sessions their agent deleted, and also with INTENDANT_VAULT=off — what is kept stays on
 * disk): a `vault` block in --json, a section "in the vault" on the terminal; `complete`
 * is true only when the index and the vault were both read whole.
 */
import { resolveConfig } from "../config.ts";
import { createMessageIndex } from "../message_search/mod.ts";
import { hitLink, readDaemonFile } from "../server/mod.ts";
import { stringifyTerminalSafe, terminalSafe } from "../text/mod.ts";
import { boolFlag, parseArgs } from "./parse_args.ts";
import type { CliIo, Command } from "./io.ts";
import { EXIT_OK } from "./exit_codes.ts";
import { statusLine } from "./status_line.ts";
import { auditSecrets, type SecretsAudit, type SessionSecrets } from "./secrets_audit.ts";
import { Vault } from "../vault/mod.ts";
import {
  auditVaultSecrets,
  type VaultSecretsAudit,
  type VaultSessionSecrets,
} from "./secrets_vault_audit.ts";

const USAGE = "intendant secrets [--json] [--refresh]";

/** Findings listed per session in the text output; --json lists all. */
const FINDINGS_SHOWN_PER_SESSION = 20;

export const secretsCommand: Command = {
  name: "secrets",
  summary: "audit the index for secrets pasted into conversations (masked), to rotate them",
  usage: USAGE,
  async run(argv: string[], io: CliIo): Promise<number> {
    const args = parseArgs(argv, { json: { type: "boolean" }, refresh: { type: "boolean" } });
    const cfg = resolveConfig(io.env, { cwd: io.cwd });
    const status = statusLine(io.stderr, { isTty: io.isTty });
    let audit: SecretsAudit;
    let vault: VaultSecretsAudit;
    try {
      const { store, indexer } = await createMessageIndex(cfg);
      if (boolFlag(args, "refresh")) {
        status.update("refreshing the index…");
        await indexer.sweep();
      }
      audit = await auditSecrets(store, {
        onProgress: (n, total) => status.update(`auditing the index: ${n} of ${total} sessions…`),
      });
      vault = await auditVaultSecrets(new Vault({ dir: cfg.vault.dir }), {
        onProgress: (n, total) => status.update(`auditing the vault: ${n} of ${total} sessions…`),
      });
    } finally {
      status.done();
    }
    // Links name the running daemon's port when there is one, else the configured port;
    // port 0 (picked at start) gives no link.
    const daemon = await readDaemonFile(cfg.daemonJsonPath);
    const port = daemon?.port ?? cfg.server.port;
    const link = (key: string, locator: string) =>
      port === 0 ? null : hitLink(port, key, { locator });
    if (boolFlag(args, "json")) {
      io.stdout(stringifyTerminalSafe(jsonShape(audit, link, vault)) + "\n");
    } else {
      io.stdout(formatAudit(audit, link) + formatVaultAudit(vault));
    }
    return EXIT_OK;
  },
};

type LinkOf = (key: string, locator: string) => string | null;

/**
 * The stable --json shape: the audit plus each finding's time as ISO and its link, and
 * the vault's block (added; every earlier field keeps its meaning, `complete` now covers
 * the vault too).
 */
function jsonShape(a: SecretsAudit, link: LinkOf, v: VaultSecretsAudit) {
  return {
    complete: a.complete && v.complete,
    sessions_scanned: a.sessions_scanned,
    messages_scanned: a.messages_scanned,
    secrets_found: a.sessions.reduce((n, s) => n + s.findings.length, 0),
    kinds: totalKinds(a),
    sessions: a.sessions.map((s) => ({
      session_key: s.session_key,
      source: s.source,
      session_id: s.session_id,
      title: s.title,
      project: s.project,
      kinds: s.kinds,
      findings: s.findings.map((f) => ({
        ...f,
        time: new Date(f.ts_ms).toISOString(),
        link: link(s.session_key, f.locator),
      })),
    })),
    unreadable: a.unreadable,
    vault: {
      dir: v.dir,
      complete: v.complete,
      sessions_scanned: v.sessions_scanned,
      versions_scanned: v.versions_scanned,
      bytes_scanned: v.bytes_scanned,
      secrets_found: v.sessions.reduce((n, s) => n + s.findings.length, 0),
      kinds: totalKinds(v),
      sessions: v.sessions.map((s) => ({
        ...s,
        findings: s.findings.map((f) => ({
          ...f,
          versions: f.versions.map((x) => ({ ...x, kept: new Date(x.kept_ms).toISOString() })),
        })),
      })),
      unreadable: v.unreadable,
    },
  };
}

function totalKinds(a: { sessions: { kinds: Record<string, number> }[] }): Record<string, number> {
  const out: Record<string, number> = {};
  for (const s of a.sessions) {
    for (const [k, n] of Object.entries(s.kinds)) out[k] = (out[k] ?? 0) + n;
  }
  return out;
}

function kindsLine(s: Pick<SessionSecrets, "kinds">): string {
  return Object.entries(s.kinds).sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]))
    .map(([k, n]) => (n > 1 ? `${k} ×${n}` : k)).join(", ");
}

/** The human listing, grouped by session. */
export function formatAudit(a: SecretsAudit, link: LinkOf): string {
  const lines: string[] = [];
  let total = 0;
  for (const s of a.sessions) {
    total += s.findings.length;
    const head = [terminalSafe(s.source), terminalSafe(s.session_id)];
    if (s.title) head.push(` ${terminalSafe(s.title)}`);
    if (s.project) head.push(` (${terminalSafe(s.project)})`);
    lines.push(`${head.join(" ")}  [${s.findings.length}: ${kindsLine(s)}]`);
    for (const f of s.findings.slice(0, FINDINGS_SHOWN_PER_SESSION)) {
      const when = new Date(f.ts_ms).toISOString().slice(0, 16).replace("T", " ");
      const flags = [f.superseded ? "superseded" : "", f.subagent ? "subagent" : ""]
        .filter(Boolean).join(",");
      lines.push(
        `  ${when} ${f.role}${flags ? ` [${flags}]` : ""}: ${terminalSafe(f.masked)}  ${
          terminalSafe(f.excerpt)
        }`,
      );
      const url = link(s.session_key, f.locator);
      if (url) lines.push(`    ${terminalSafe(url)}`);
    }
    const more = s.findings.length - FINDINGS_SHOWN_PER_SESSION;
    if (more > 0) lines.push(`  … and ${more} more (all with --json)`);
  }
  for (const u of a.unreadable) {
    lines.push(`(not audited: ${terminalSafe(u.session_key)}: ${terminalSafe(u.reason)})`);
  }
  const scanned = `${a.messages_scanned} message${
    a.messages_scanned === 1 ? "" : "s"
  } of ${a.sessions_scanned} session${a.sessions_scanned === 1 ? "" : "s"}`;
  if (total === 0) {
    lines.push(
      a.complete
        ? `no secrets found in ${scanned}`
        : `no secrets found in the ${scanned} that could be read; ${a.unreadable.length} could not (run \`intendant index\`)`,
    );
  } else {
    lines.push(
      `${total} secret${total === 1 ? "" : "s"} in ${a.sessions.length} session${
        a.sessions.length === 1 ? "" : "s"
      } (${scanned} audited${a.complete ? "" : `, ${a.unreadable.length} not readable`}); ` +
        "rotate them at their providers (masking hides them on the way out; the index keeps the original text)",
    );
  }
  return lines.join("\n") + "\n";
}

const minute = (ms: number) => new Date(ms).toISOString().slice(0, 16).replace("T", " ");

/** The vault's section: per kept session, each finding with the versions that hold it. */
export function formatVaultAudit(v: VaultSecretsAudit): string {
  if (v.sessions_scanned === 0 && v.unreadable.length === 0) return "";
  const lines = [`in the vault (${terminalSafe(v.dir)}):`];
  let total = 0;
  for (const s of v.sessions) total += sessionLines(s, lines);
  for (const u of v.unreadable) {
    const where = [u.session_key, u.file, u.version === null ? null : `version ${u.version}`]
      .filter((x) => x !== null).join(" ");
    lines.push(
      `(vault not audited: ${terminalSafe(where ? `${where}: ` : "")}${terminalSafe(u.reason)})`,
    );
  }
  const scanned = `${v.versions_scanned} kept version${v.versions_scanned === 1 ? "" : "s"} of ` +
    `${v.sessions_scanned} session${v.sessions_scanned === 1 ? "" : "s"}`;
  if (total === 0) {
    lines.push(
      v.complete
        ? `no secrets found in the vault's ${scanned}`
        : `no secrets found in the vault's ${scanned} that could be read; ${v.unreadable.length} could not`,
    );
  } else {
    lines.push(
      `${total} secret${total === 1 ? "" : "s"} in ${v.sessions.length} session${
        v.sessions.length === 1 ? "" : "s"
      } kept in the vault (${scanned} audited${
        v.complete ? "" : `, ${v.unreadable.length} not readable`
      }); the vault keeps what the agents wrote: rotate them at their providers`,
    );
  }
  return lines.join("\n") + "\n";
}

/** One kept session's lines; returns how many findings it holds. */
function sessionLines(s: VaultSessionSecrets, lines: string[]): number {
  const gone = s.gone ? " (deleted by its agent: only in the vault)" : "";
  lines.push(
    `${terminalSafe(s.source)} ${terminalSafe(s.session_id)}${gone}  [${s.findings.length}: ${
      kindsLine(s)
    }] in the vault`,
  );
  for (const f of s.findings.slice(0, FINDINGS_SHOWN_PER_SESSION)) {
    const vs = f.versions.map((x) => `version ${x.version} kept ${minute(x.kept_ms)}`).join(", ");
    lines.push(
      `  ${terminalSafe(f.file)}:${f.line} (${vs}): ${terminalSafe(f.masked)}  ${
        terminalSafe(f.excerpt)
      }`,
    );
  }
  const more = s.findings.length - FINDINGS_SHOWN_PER_SESSION;
  if (more > 0) lines.push(`  … and ${more} more (all with --json)`);
  return s.findings.length;
}
