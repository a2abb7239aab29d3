/**
 * The HTTP gateway: createApp (Hono, in-process testable with app.request()), the route
 * table, the security policy, and the daemon that serves it on 127.0.0.1.
 */
export { createApp } from "./app.ts";
export type { AppDeps } from "./app.ts";
export { ROUTES } from "./routes.ts";
export type { RouteDef, RouteDeps } from "./routes.ts";
export { SearchGate } from "./search_gate.ts";
export { allowedHosts, allowedOrigins, newToken, TOKEN_COOKIE, tokenMatches } from "./security.ts";
export { loadCursorKey, startDaemon } from "./daemon.ts";
export {
  COVERAGE_RESERVE_BYTES,
  SEARCH_PAGE_BUDGET_BYTES,
  SEARCH_RESPONSE_CAP_BYTES,
} from "./coverage_route.ts";
export type { Daemon, DaemonOptions } from "./daemon.ts";
