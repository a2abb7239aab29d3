/**
 * createApp(deps) → the Hono application: the declared route table, the security
 * middleware (Host allowlist, token, Origin, security headers, no-store on the API) and
 * the one onError. `/` serves the dashboard only to a valid cookie (or bearer); anyone
 * else, and a wrong `?token=`, gets the token page (token_page.ts) with status 401, and
 * every API 401 carries the same help as JSON. Handlers are thin: they validate parameters
 * with zod and call the catalog, the search engine or the indexer. Nothing here logs
 * request lines or query strings (q is never logged).
 */
import { Hono } from "hono";
import type { Context } from "hono";
import type { SearchResponse } from "../message_search/mod.ts";
import { mapError } from "./errors_map.ts";
import {
  hostAllowed,
  originAllowed,
  presentedToken,
  TOKEN_COOKIE,
  tokenMatches,
} from "./security.ts";
import { SearchGate } from "./search_gate.ts";
import { type RouteDeps, ROUTES } from "./routes.ts";
import { landingPage } from "./landing.ts";
import { dashboardCss, tokenHelp, tokenPage, type TokenProblem } from "./token_page.ts";

/** Everything the app needs, injected (tests pass real components on temp dirs). */
export type AppDeps = RouteDeps & {
  /** The token, or a function answering the current one (the daemon follows rotations). */
  token: string | (() => string);
  port: number;
  /** daemon.json as the user would type it (`~/…`), named by the 401 page and body. */
  daemonJsonDisplay?: string;
  /** The bundled dashboard; without it `/` serves the API landing page. */
  ui?: { html: string; js: string };
  logger?: (line: string) => void;
};

const SECURITY_HEADERS: Record<string, string> = {
  "X-Content-Type-Options": "nosniff",
  "Referrer-Policy": "no-referrer",
  "X-Frame-Options": "DENY",
  "Cross-Origin-Opener-Policy": "same-origin",
  "Cross-Origin-Resource-Policy": "same-origin",
};

const CSP =
  "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; connect-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'";

/** Builds the app. */
export function createApp(deps: AppDeps): Hono {
  const app = new Hono();
  const gate = deps.gate ?? new SearchGate(2);
  const routeDeps: RouteDeps = { ...deps, gate };
  const currentToken = typeof deps.token === "function" ? deps.token : () => deps.token as string;
  const css = dashboardCss(deps.ui?.html);
  const help = (reason: TokenProblem) => tokenHelp(reason, deps.daemonJsonDisplay ?? null);
  // The page a visitor without a valid token gets instead of the app (which would mount,
  // say "Loading…" and fail every request).
  const denied = (c: Context, reason: TokenProblem) => {
    c.header("Content-Security-Policy", CSP);
    c.header("Cache-Control", "no-store");
    return c.html(tokenPage(help(reason), css), 401);
  };

  app.use("*", async (c, next) => {
    if (!hostAllowed(c.req.header("host"), deps.port)) {
      return c.json({ error: "host_not_allowed" }, 403, {
        ...SECURITY_HEADERS,
        "Cache-Control": "no-store",
      });
    }
    await next();
    for (const [k, v] of Object.entries(SECURITY_HEADERS)) c.res.headers.set(k, v);
  });

  app.use("/api/*", async (c, next) => {
    c.header("Cache-Control", "no-store");
    const given = presentedToken(c.req.raw.headers);
    if (!tokenMatches(given, currentToken())) {
      return c.json(help(given ? "invalid" : "missing"), 401);
    }
    const stateChanging = c.req.method !== "GET" && c.req.method !== "HEAD";
    if (
      (stateChanging || c.req.path.endsWith("/stream")) &&
      !originAllowed(c.req.raw.headers, deps.port)
    ) {
      return c.json({ error: "bad_origin" }, 403);
    }
    await next();
    c.res.headers.set("Cache-Control", "no-store");
  });

  app.get("/", (c) => {
    const given = c.req.query("token");
    const token = currentToken();
    if (given !== undefined) {
      if (!tokenMatches(given, token)) return denied(c, "invalid");
      // Trade the URL token for a cookie, and get it out of the address bar and history.
      c.header("Set-Cookie", `${TOKEN_COOKIE}=${token}; HttpOnly; SameSite=Strict; Path=/`);
      c.header("Cache-Control", "no-store");
      return c.redirect("/", 303);
    }
    const presented = presentedToken(c.req.raw.headers);
    if (!tokenMatches(presented, token)) return denied(c, presented ? "invalid" : "missing");
    c.header("Content-Security-Policy", CSP);
    c.header("Cache-Control", "no-store");
    return c.html(deps.ui?.html ?? landingPage(ROUTES));
  });
  if (deps.ui) {
    const js = deps.ui.js;
    app.get(
      "/app.js",
      (c) =>
        c.body(js, 200, {
          "Content-Type": "text/javascript; charset=utf-8",
          "Cache-Control": "no-cache",
        }),
    );
  }

  for (const r of ROUTES) {
    const handler = (c: Context) => r.handler(c, routeDeps);
    if (r.method === "GET") app.get(r.path, handler);
    else if (r.method === "POST") app.post(r.path, handler);
    else app.delete(r.path, handler);
  }

  app.notFound((c) => c.json({ error: "not_found" }, 404, { "Cache-Control": "no-store" }));
  app.onError((err, c) => {
    const { status, body } = mapError(err);
    if (status >= 500) {
      deps.logger?.(`intendant: ${c.req.method} ${c.req.routePath} failed: ${err.message}`);
    }
    return c.json(body, status as 400, { "Cache-Control": "no-store" });
  });
  return app;
}

export type { SearchResponse };
