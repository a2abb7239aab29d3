/**
 * The team URL (`--team URL` / INTENDANT_TEAM_URL): parsed and validated with libpq's
 * URI shape, `postgres[ql]://[user[:password]@]host[:port]/database[?sslmode=…]`.
 *
 * Decisions (the issue is silent on them):
 *  - Scheme `postgres://` or `postgresql://` (case-insensitive); anything else is refused.
 *  - The user is REQUIRED: every machine publishes as its own role (row-level security
 *    keys writes on it), so falling back to the OS login name would hide a misconfiguration.
 *  - The database is required (libpq would default it to the user name: too implicit for a
 *    shared replica).
 *  - Exactly one TCP host. Unix-socket hosts (an empty host, a host starting with `/`,
 *    `%2F…`, or `?host=/…`) are refused: the locked profile grants net to one host:port
 *    and cannot name a socket the client picks. Several hosts (`h1,h2`) are refused.
 *    IPv6 literals go in brackets (`[::1]`); `host` keeps them without brackets.
 *  - Port: 1-65535, default 5432. Query parameters: only `sslmode` (libpq's six values,
 *    default "prefer"); any other is refused, listing the names only (values may hold a
 *    secret: `?password=`). A repeated parameter is refused (libpq silently takes the last).
 *  - Password: from the URL, else PGPASSWORD, else the password file (pgpass.ts), in
 *    libpq's order; an empty password counts as none (libpq then consults the next source).
 *  - Percent-decoding applies to user, password, host and database; a malformed escape is
 *    refused naming the part, never its text when the part is the password.
 * Invariant: the password is never in an error message, in `redacted`, in JSON.stringify
 * of the result or in Deno.inspect of it (the property is non-enumerable). Error messages
 * never quote the raw URL (it may carry the password); they quote the offending part.
 * Errors: InvalidInputError (exit 2), sentence case.
 */
import { InvalidInputError } from "../errors.ts";
import { lookupPgpass, type PgpassFile } from "./pgpass.ts";

/** libpq's sslmode values, weakest first. */
export const SSL_MODES = [
  "disable",
  "allow",
  "prefer",
  "require",
  "verify-ca",
  "verify-full",
] as const;
export type SslMode = typeof SSL_MODES[number];

export const DEFAULT_PG_PORT = 5432;
export const DEFAULT_SSL_MODE: SslMode = "prefer";

/** Query parameters the URL may carry. */
export const SUPPORTED_PARAMS: readonly string[] = ["sslmode"];

/** Where the password came from. */
export type PasswordSource = "url" | "PGPASSWORD" | "pgpass";

/** A parsed team URL. `password` is non-enumerable (see the header). */
export interface TeamUrl {
  host: string;
  /** True when the host is an IPv6 literal (written in brackets in a URL). */
  ipv6: boolean;
  port: number;
  database: string;
  user: string;
  readonly password: string | null;
  passwordSource: PasswordSource | null;
  sslmode: SslMode;
  /** The URL without its password: `postgres://alice:***@db.example:5432/team`. */
  redacted: string;
  /** Lines to print (a password file libpq would ignore, with why). */
  warnings: string[];
}

/** Secrets and the password file, read by lib/config.ts. */
export interface TeamUrlOptions {
  pgpassword?: string | null;
  pgpass?: PgpassFile | null;
}

function bad(message: string): never {
  throw new InvalidInputError(message);
}

/** A value quoted for a message (never used on a password). */
function q(s: string): string {
  return s.length > 80 ? `${JSON.stringify(s.slice(0, 80))}…` : JSON.stringify(s);
}

/** Percent-decodes `s`; a malformed escape is refused naming `part` (not its text). */
function decode(s: string, part: string): string {
  try {
    return decodeURIComponent(s);
  } catch {
    return bad(`Invalid team URL: the ${part} has a malformed percent-escape`);
  }
}

/** Percent-encodes a user or database name for the redacted URL. */
function encodePart(s: string): string {
  return encodeURIComponent(s);
}

// deno-lint-ignore no-control-regex
const CONTROL = /[\x00-\x1f\x7f]/;
/** A DNS name or IPv4 literal: letters, digits, `.`, `-`, `_`. */
const HOSTNAME = /^[A-Za-z0-9._-]+$/;
/** An IPv6 literal (structure checked loosely; the client validates it further). */
const IPV6 = /^[0-9A-Fa-f:.]+$/;

const SOCKET_WHY =
  "unix-socket hosts are not supported: the locked profile grants network access to one " +
  "host:port, so name the server's TCP host (e.g. 127.0.0.1)";

/** Splits `host[:port]` (brackets for IPv6); percent-decodes and validates the host. */
function parseHostPort(hostport: string): { host: string; ipv6: boolean; port: number } {
  if (hostport.includes(",")) {
    bad("Invalid team URL: several hosts are not supported; name one host");
  }
  let hostRaw: string;
  let portRaw: string | null = null;
  let ipv6 = false;
  if (hostport.startsWith("[")) {
    const close = hostport.indexOf("]");
    if (close < 0) bad('Invalid team URL: an IPv6 host has no closing "]"');
    hostRaw = hostport.slice(1, close);
    ipv6 = true;
    const after = hostport.slice(close + 1);
    if (after !== "") {
      if (!after.startsWith(":")) {
        bad(`Invalid team URL: unexpected ${q(after)} after the IPv6 host`);
      }
      portRaw = after.slice(1);
    }
  } else {
    const colons = hostport.split(":").length - 1;
    if (colons > 1) bad("Invalid team URL: an IPv6 host must be written in brackets, e.g. [::1]");
    const c = hostport.indexOf(":");
    hostRaw = c < 0 ? hostport : hostport.slice(0, c);
    if (c >= 0) portRaw = hostport.slice(c + 1);
  }
  const host = decode(hostRaw, "host");
  if (host === "" || host.startsWith("/")) bad(`Invalid team URL: ${SOCKET_WHY}`);
  if (ipv6 ? !IPV6.test(host) || !host.includes(":") : !HOSTNAME.test(host)) {
    bad(`Invalid team URL: host ${q(host)} is not a host name or IP address`);
  }
  let port = DEFAULT_PG_PORT;
  if (portRaw !== null) {
    const n = /^[0-9]{1,5}$/.test(portRaw) ? Number(portRaw) : NaN;
    if (!(n >= 1 && n <= 65535)) bad(`Invalid team URL: port ${q(portRaw)} is not 1-65535`);
    port = n;
  }
  return { host, ipv6, port };
}

/** Parses the query string: only SUPPORTED_PARAMS; names of others are listed. */
function parseQuery(query: string): { sslmode: SslMode | null } {
  const seen = new Map<string, string>();
  const unsupported: string[] = [];
  for (const pair of query.split("&")) {
    if (pair === "") continue;
    const eq = pair.indexOf("=");
    const name = decode(eq < 0 ? pair : pair.slice(0, eq), "query parameter name");
    const value = eq < 0 ? "" : pair.slice(eq + 1);
    if (!SUPPORTED_PARAMS.includes(name)) {
      if (name === "host" && decode(value, `"host" parameter`).startsWith("/")) {
        bad(`Invalid team URL: ${SOCKET_WHY}`);
      }
      unsupported.push(name);
      continue;
    }
    if (seen.has(name)) bad(`Invalid team URL: query parameter ${q(name)} is given twice`);
    seen.set(name, decode(value, `${q(name)} parameter`));
  }
  if (unsupported.length > 0) {
    const names = [...new Set(unsupported)].map(q).join(", ");
    bad(
      `Invalid team URL: unsupported query parameter${
        unsupported.length > 1 ? "s" : ""
      } ${names}; ` +
        `supported: ${SUPPORTED_PARAMS.map(q).join(", ")}`,
    );
  }
  const mode = seen.get("sslmode");
  if (mode === undefined) return { sslmode: null };
  if (!(SSL_MODES as readonly string[]).includes(mode)) {
    bad(`Invalid team URL: sslmode ${q(mode)} is not one of ${SSL_MODES.join(", ")}`);
  }
  return { sslmode: mode as SslMode };
}

/** Parses and validates `raw` and finds its password (see the header). */
export function parseTeamUrl(raw: string, o: TeamUrlOptions = {}): TeamUrl {
  if (CONTROL.test(raw)) bad("Invalid team URL: it contains a control character");
  const scheme = /^(postgres|postgresql):\/\//i.exec(raw);
  if (!scheme) {
    const other = /^([A-Za-z][A-Za-z0-9+.-]*):/.exec(raw);
    bad(
      other
        ? `Invalid team URL: scheme ${
          q(other[1]!)
        } is not supported; use postgres:// or postgresql://`
        : "Invalid team URL: expected postgres://user@host[:port]/database",
    );
  }
  const body = raw.slice(scheme[0].length);
  // The userinfo ends at the LAST "@" of the URL, so a password with an unescaped "@",
  // "/", "?" or ":" still splits where the user meant, and no piece of a password can land
  // in the host, port or database parts that error messages quote. The price: an "@" in
  // the database name or a query value must be percent-encoded (%40).
  const at = body.lastIndexOf("@");
  const userinfo = at >= 0 ? body.slice(0, at) : null;
  const afterUser = body.slice(at + 1);
  // The host:port ends at the first "/" (the database path) or "?" (no path).
  const end = afterUser.search(/[/?]/);
  const hostport = end >= 0 ? afterUser.slice(0, end) : afterUser;
  const rest = end >= 0 ? afterUser.slice(end) : "";
  const { host, ipv6, port } = parseHostPort(hostport);

  let user = "";
  let urlPassword: string | null = null;
  if (userinfo !== null) {
    const c = userinfo.indexOf(":");
    user = decode(c < 0 ? userinfo : userinfo.slice(0, c), "user name");
    if (c >= 0) urlPassword = decode(userinfo.slice(c + 1), "password");
  }
  if (user === "") {
    bad(
      "Invalid team URL: no user; name this machine's database role: postgres://ROLE@host/database",
    );
  }

  const qm = rest.indexOf("?");
  const path = qm >= 0 ? rest.slice(0, qm) : rest;
  const { sslmode } = parseQuery(qm >= 0 ? rest.slice(qm + 1) : "");
  const database = decode(path.replace(/^\//, ""), "database name");
  if (database === "") {
    bad("Invalid team URL: no database; add it as the path: postgres://user@host/database");
  }

  let password: string | null = null;
  let passwordSource: PasswordSource | null = null;
  const warnings: string[] = [];
  if (urlPassword) {
    password = urlPassword;
    passwordSource = "url";
  } else if (o.pgpassword) {
    password = o.pgpassword;
    passwordSource = "PGPASSWORD";
  } else {
    const found = lookupPgpass(o.pgpass ?? null, { host, port, database, user });
    warnings.push(...found.warnings);
    if (found.password) {
      password = found.password;
      passwordSource = "pgpass";
    }
  }

  const hostPart = ipv6 ? `[${host}]` : host;
  const query = sslmode !== null ? `?sslmode=${sslmode}` : "";
  const redacted =
    `postgres://${encodePart(user)}${urlPassword ? ":***" : ""}@${hostPart}:${port}/` +
    `${encodePart(database)}${query}`;
  const out = {
    host,
    ipv6,
    port,
    database,
    user,
    passwordSource,
    sslmode: sslmode ?? DEFAULT_SSL_MODE,
    redacted,
    warnings,
  } as Omit<TeamUrl, "password">;
  // Non-enumerable: JSON.stringify, spreads and Deno.inspect leave it out.
  Object.defineProperty(out, "password", { value: password, enumerable: false });
  return out as TeamUrl;
}
