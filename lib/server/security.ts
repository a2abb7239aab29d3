/**
 * Localhost hardening (figures D1–D4 and D13 in tests/RELIABILITY.md). Deno + Hono give no
 * DNS-rebinding protection: Deno.serve on 127.0.0.1 answers any Host, and Hono's csrf()
 * lets GET and JSON bodies through. So: an EXACT Host allowlist (`127.0.0.1:P`,
 * `localhost:P`, `[::1]:P`), a random token (persisted and rotatable: token_file.ts) on
 * every /api route and on the dashboard page (bearer header, or the HttpOnly
 * SameSite=Strict cookie set when the tokenized URL is opened; never the query string
 * after bootstrap), Origin checked on state-changing requests and the live stream,
 * constant-time comparison, and no CORS grants ever.
 */
import { timingSafeEqual } from "node:crypto";

export const TOKEN_COOKIE = "intendant_token";

/** The Host values we serve. */
export function allowedHosts(port: number): Set<string> {
  return new Set([`127.0.0.1:${port}`, `localhost:${port}`, `[::1]:${port}`]);
}

/** The Origin values we accept. */
export function allowedOrigins(port: number): Set<string> {
  return new Set([...allowedHosts(port)].map((h) => `http://${h}`));
}

/** Exact, case-sensitive match (a browser sends lowercase; anything else is not a browser we serve). */
export function hostAllowed(host: string | undefined, port: number): boolean {
  return host !== undefined && allowedHosts(port).has(host);
}

/** Constant-time token comparison (length leak only: tokens have a fixed length). */
export function tokenMatches(given: string | null | undefined, token: string): boolean {
  if (!given) return false;
  const a = new TextEncoder().encode(given);
  const b = new TextEncoder().encode(token);
  if (a.length !== b.length) {
    // Still spend a comparison so a wrong length is not measurably faster.
    timingSafeEqual(b, b);
    return false;
  }
  return timingSafeEqual(a, b);
}

/** Reads the token from `Authorization: Bearer …` or the cookie. Query strings are ignored. */
export function presentedToken(headers: Headers): string | null {
  const auth = headers.get("authorization");
  if (auth?.startsWith("Bearer ")) return auth.slice(7).trim();
  const cookie = headers.get("cookie");
  if (!cookie) return null;
  for (const part of cookie.split(";")) {
    const [k, ...v] = part.trim().split("=");
    if (k === TOKEN_COOKIE) return v.join("=");
  }
  return null;
}

/**
 * Origin policy: a present Origin must be ours; `Sec-Fetch-Site: cross-site` is refused.
 * A missing Origin is fine for non-browser clients (they authenticate with the bearer).
 */
export function originAllowed(headers: Headers, port: number): boolean {
  const site = headers.get("sec-fetch-site");
  if (site === "cross-site") return false;
  const origin = headers.get("origin");
  if (origin === null) return true;
  return allowedOrigins(port).has(origin);
}

/** A fresh 256-bit token, base64url. */
export function newToken(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(32));
  return btoa(String.fromCharCode(...bytes)).replaceAll("+", "-").replaceAll("/", "_").replace(
    /=+$/,
    "",
  );
}
