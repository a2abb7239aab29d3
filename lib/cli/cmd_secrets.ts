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
    try {
      const { store, indexer } = await createMessageIndex(cfg);
      if (boolFlag(args, "refresh")) {
        status.update("refreshing the index…");
        await indexer.sweep();
      }
      audit = await auditSecrets(store, {
        onProgress: (n, total) => status.update(`auditing the index: ${n} of ${total} sessions…`),
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
      io.stdout(stringifyTerminalSafe(jsonShape(audit, link)) + "\n");
    } else {
      io.stdout(formatAudit(audit, link));
    }
    return EXIT_OK;
  },
};

type LinkOf = (key: string, locator: string) => string | null;

/** The stable --json shape: the audit plus each finding's time as ISO and its link. */
function jsonShape(a: SecretsAudit, link: LinkOf) {
  return {
    complete: a.complete,
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
  };
}

function totalKinds(a: SecretsAudit): Record<string, number> {
  const out: Record<string, number> = {};
  for (const s of a.sessions) {
    for (const [k, n] of Object.entries(s.kinds)) out[k] = (out[k] ?? 0) + n;
  }
  return out;
}

function kindsLine(s: SessionSecrets): string {
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
