/**
 * Opens the team database (issue 19) and checks, in order, that it can hold the team
 * replica; each failed check is one TeamDbError with one clear message:
 *  1. connect: refused, timeout, DNS, TLS, unknown database, wrong password
 *     ("authentication failed for role …");
 *  2. server version ≥ 15;
 *  3. the database's LC_CTYPE is UTF-8 (with LC_CTYPE=C pg_trgm extracts no trigrams
 *     from CJK text: search would silently miss it);
 *  4. pg_trgm installed in the database or available to install (creating it is the
 *     migrations' job);
 *  5. every pooled connection runs with `plan_cache_mode = force_custom_plan` (the issue's
 *     25 s generic-plan trap) and `application_name = intendant`. Both are sent as startup
 *     parameters (porsager's `connection` option), so they hold on EVERY connection the pool
 *     opens, not just the first; the open re-reads them with SHOW, because a pooler
 *     (pgbouncer) may drop startup parameters — then we refuse rather than run slow plans.
 *
 * sslmode → porsager's `ssl` option (porsager 3.4.9, lib/connection.js `secure()`):
 *  - disable     → `false`: no TLS.
 *  - allow       → `"prefer"`. libpq's allow tries plaintext first and TLS only if the
 *                  server insists; porsager's own "allow" is NOT that (it sends SSLRequest
 *                  and then starts TLS even when the server said no, so it fails on a
 *                  plaintext server). "prefer" connects to every server "allow" can and
 *                  never transmits less protected than allow would.
 *  - prefer      → `"prefer"`: TLS without verification when the server offers it, else
 *                  plaintext — the same as libpq.
 *  - require     → `"require"`: TLS without certificate verification (libpq's require,
 *                  except libpq verifies when ~/.postgresql/root.crt exists; we read no such
 *                  file — use verify-ca/verify-full to verify).
 *  - verify-ca   → tls options `{ rejectUnauthorized: true, checkServerIdentity: () => {} }`:
 *                  chain verified against the runtime's CA store, host name not checked.
 *  - verify-full → `"verify-full"`: porsager passes no override, so node:tls verifies the
 *                  chain and the host name (servername = the host unless it is an IP).
 * Invariants: no message ever carries the password (messages quote `TeamUrl.redacted`, and
 * the client's own error is reduced to its code or server message, never attached as
 * `cause` — its object could hold connection options); on any failed check the pool is
 * ended before the error is thrown (no leaked sockets).
 */
import postgres from "postgres";
import type { TeamUrl } from "./team_url.ts";
import { connectionLostReason } from "./connection_faults.ts";

/** Which check failed. */
export type TeamDbErrorKind =
  | "connect"
  | "tls"
  | "auth"
  | "database"
  | "version"
  | "ctype"
  | "pg_trgm"
  | "settings"
  | "schema"
  | "privilege"
  /** The connection went away while opening or using it (a restart, a dropped network). */
  | "lost";

/** A team database that cannot be opened or used; the message names the redacted URL. */
export class TeamDbError extends Error {
  readonly kind: TeamDbErrorKind;
  constructor(kind: TeamDbErrorKind, message: string) {
    super(message);
    this.name = "TeamDbError";
    this.kind = kind;
  }
}

/** The client type (porsager's Sql). */
export type TeamSql = postgres.Sql<Record<string, never>>;

/** An open, checked team database. */
export interface TeamDb {
  sql: TeamSql;
  /** `server_version` as the server reports it, e.g. "16.4 (Debian 16.4-1)". */
  serverVersion: string;
  /** `server_version_num`, e.g. 160004. */
  serverVersionNum: number;
  /** Whether pg_trgm is already installed in the database or only available. */
  pgTrgm: "installed" | "available";
  /** Ends the pool (waits up to 5 s for running queries). Idempotent. */
  close(): Promise<void>;
}

export interface OpenTeamDbOptions {
  /** Per-connection connect timeout; default 10 000 ms. */
  connectTimeoutMs?: number;
  /** Sent as application_name; default "intendant". */
  applicationName?: string;
  /** Pool size; default 4 (the publisher and searches are few and short). */
  max?: number;
}

export const MIN_SERVER_VERSION_NUM = 150000;
export const DEFAULT_CONNECT_TIMEOUT_MS = 10_000;
export const PLAN_CACHE_MODE = "force_custom_plan";

type SslOption = false | "prefer" | "require" | "verify-full" | Record<string, unknown>;

/** porsager's `ssl` value for an sslmode (see the header for why each). */
export function sslOption(mode: TeamUrl["sslmode"]): SslOption {
  switch (mode) {
    case "disable":
      return false;
    case "allow":
    case "prefer":
      return "prefer";
    case "require":
      return "require";
    case "verify-ca":
      return { rejectUnauthorized: true, checkServerIdentity: () => undefined };
    case "verify-full":
      return "verify-full";
  }
}

function errText(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}

/** Maps the client's failure while connecting to one TeamDbError. */
function connectError(url: TeamUrl, e: unknown, timeoutMs: number): TeamDbError {
  const where = `team database ${url.redacted}`;
  const code = (e as { code?: unknown })?.code;
  const msg = errText(e);
  if (typeof code === "string") {
    if (code === "28P01" || code === "28000") {
      // 28000 is also "no pg_hba.conf entry": the server's own wording says which.
      const detail = code === "28000" ? `: ${msg}` : "";
      return new TeamDbError(
        "auth",
        `Cannot open ${where}: authentication failed for role ${JSON.stringify(url.user)}` +
          `${detail} (check the password in the URL, PGPASSWORD or the password file)`,
      );
    }
    if (code === "3D000") {
      return new TeamDbError(
        "database",
        `Cannot open ${where}: database ${JSON.stringify(url.database)} does not exist`,
      );
    }
    if (code === "CONNECT_TIMEOUT") {
      return new TeamDbError(
        "connect",
        `Cannot open ${where}: no answer from ${url.host}:${url.port} within ${timeoutMs} ms`,
      );
    }
    if (code === "ECONNREFUSED") {
      return new TeamDbError(
        "connect",
        `Cannot open ${where}: connection refused by ${url.host}:${url.port} ` +
          `(is PostgreSQL running and listening there?)`,
      );
    }
    if (code === "ENOTFOUND" || code === "EAI_AGAIN") {
      return new TeamDbError(
        "connect",
        `Cannot open ${where}: host ${JSON.stringify(url.host)} not found`,
      );
    }
    if (/^(ERR_TLS|ERR_SSL|CERT_|DEPTH_|UNABLE_TO|SELF_SIGNED|ERR_CERT)/.test(code)) {
      return new TeamDbError(
        "tls",
        `Cannot open ${where}: TLS failed with sslmode=${url.sslmode} (does the server accept TLS?): ${msg}`,
      );
    }
  }
  // A server restarting ("the database system is starting up", 57P03) or a connection cut
  // during the handshake: run again in a moment, the URL is fine.
  const lost = connectionLostReason(e);
  if (lost && url.sslmode !== "require" && !url.sslmode.startsWith("verify")) {
    return new TeamDbError("lost", `Cannot open ${where}: ${lost}`);
  }
  if (/tls|ssl|certificate/i.test(msg) || (e as { name?: string })?.name === "InvalidData") {
    return new TeamDbError(
      "tls",
      `Cannot open ${where}: TLS failed with sslmode=${url.sslmode} (does the server accept TLS?): ${msg}`,
    );
  }
  if (url.sslmode !== "disable" && url.sslmode !== "prefer" && url.sslmode !== "allow") {
    // porsager starts TLS even when the server answered "no TLS": the server then drops
    // the garbled connection, which surfaces as a bare close.
    return new TeamDbError(
      "tls",
      `Cannot open ${where}: the connection failed with sslmode=${url.sslmode} ` +
        `(does the server accept TLS?): ${msg}`,
    );
  }
  return new TeamDbError("connect", `Cannot open ${where}: ${msg}`);
}

/** Opens the pool and runs the checks; the pool is ended when any check fails. */
export async function openTeamDb(url: TeamUrl, o: OpenTeamDbOptions = {}): Promise<TeamDb> {
  const timeoutMs = o.connectTimeoutMs ?? DEFAULT_CONNECT_TIMEOUT_MS;
  const applicationName = o.applicationName ?? "intendant";
  const where = `team database ${url.redacted}`;
  const sql = postgres({
    host: url.host,
    port: url.port,
    database: url.database,
    username: url.user,
    password: url.password ?? undefined,
    ssl: sslOption(url.sslmode) as postgres.Options<Record<string, never>>["ssl"],
    max: o.max ?? 4,
    connect_timeout: timeoutMs / 1000,
    // Server notices are the server's text; nothing here prints them.
    onnotice: () => {},
    connection: { application_name: applicationName, plan_cache_mode: PLAN_CACHE_MODE },
  }) as unknown as TeamSql;
  let closed = false;
  const close = async () => {
    if (closed) return;
    closed = true;
    await sql.end({ timeout: 5 });
  };
  try {
    let info: { v: string; n: string; ctype: string; pcm: string; app: string };
    try {
      const [row] = await sql<{ v: string; n: string; ctype: string; pcm: string; app: string }[]>`
        SELECT current_setting('server_version') AS v,
               current_setting('server_version_num') AS n,
               (SELECT datctype FROM pg_database WHERE datname = current_database()) AS ctype,
               current_setting('plan_cache_mode') AS pcm,
               current_setting('application_name') AS app`;
      info = row!;
    } catch (e) {
      throw connectError(url, e, timeoutMs);
    }
    const num = Number(info.n);
    if (!(num >= MIN_SERVER_VERSION_NUM)) {
      throw new TeamDbError(
        "version",
        `Cannot use ${where}: PostgreSQL 15 or newer is needed: the server is ${info.v}`,
      );
    }
    if (!/\.utf-?8$|^utf-?8$/i.test(info.ctype)) {
      throw new TeamDbError(
        "ctype",
        `Cannot use ${where}: its LC_CTYPE is ${JSON.stringify(info.ctype)}, not UTF-8, so ` +
          `trigram search finds no CJK text. Create a UTF-8 database, e.g. CREATE DATABASE ` +
          `${quoteIdent(url.database)} ENCODING 'UTF8' LC_COLLATE 'C.UTF-8' LC_CTYPE 'C.UTF-8' ` +
          `TEMPLATE template0`,
      );
    }
    const [trgm] = await sql<{ installed: boolean; available: boolean }[]>`
      SELECT EXISTS (SELECT 1 FROM pg_extension WHERE extname = 'pg_trgm') AS installed,
             EXISTS (SELECT 1 FROM pg_available_extensions WHERE name = 'pg_trgm') AS available`;
    if (!trgm!.installed && !trgm!.available) {
      throw new TeamDbError(
        "pg_trgm",
        `Cannot use ${where}: the pg_trgm extension is neither installed nor available on ` +
          `the server (install PostgreSQL's contrib package, e.g. postgresql-contrib)`,
      );
    }
    if (info.pcm !== PLAN_CACHE_MODE || info.app !== applicationName) {
      throw new TeamDbError(
        "settings",
        `Cannot use ${where}: the server ignored the connection settings ` +
          `(plan_cache_mode is ${JSON.stringify(info.pcm)}, want ${PLAN_CACHE_MODE}); ` +
          `a connection pooler that drops startup parameters is not supported`,
      );
    }
    return {
      sql,
      serverVersion: info.v,
      serverVersionNum: num,
      pgTrgm: trgm!.installed ? "installed" : "available",
      close,
    };
  } catch (e) {
    await close().catch(() => {});
    if (e instanceof TeamDbError) throw e;
    const lost = connectionLostReason(e);
    if (lost) throw new TeamDbError("lost", `Lost ${where} while checking it: ${lost}`);
    throw new TeamDbError("connect", `Cannot use ${where}: ${errText(e)}`);
  }
}

/** A database name as an SQL identifier (for the advice text). */
function quoteIdent(name: string): string {
  return `"${name.replaceAll('"', '""')}"`;
}
