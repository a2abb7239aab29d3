/**
 * The HTTP gateway: createApp (Hono, in-process testable with app.request()), the route
 * table, the security policy, and the daemon that serves it on 127.0.0.1.
 */
export { createApp } from "./app.ts";
export type { AppDeps } from "./app.ts";
export { ROUTES } from "./routes.ts";
export { TEAM_HINT, TEAM_SEARCH_CAPACITY } from "./team_routes.ts";
export type { TeamDeps } from "./team_routes.ts";
export type { RouteDef, RouteDeps } from "./routes.ts";
export { SearchGate } from "./search_gate.ts";
export {
  BUSY_RETRY_AFTER_S,
  createHeavyGates,
  HEAVY_GATE_CAPACITY,
  IN_FLIGHT_HEADER,
  REPORT_STALL_MS,
} from "./heavy_gates.ts";
export type { HeavyGates } from "./heavy_gates.ts";
export { allowedHosts, allowedOrigins, newToken, TOKEN_COOKIE, tokenMatches } from "./security.ts";
export { startDaemon } from "./daemon.ts";
export {
  BODY_MAX_BYTES,
  BODY_TIMEOUT_MS,
  HEAD_MAX_BYTES,
  HEADER_TIMEOUT_MS,
  IDLE_TIMEOUT_MS,
  MAX_CONNECTIONS,
} from "./http_front.ts";
export type { FrontLimits } from "./http_front.ts";
export { CURSOR_KEY_FILE, loadCursorKey } from "./cursor_key.ts";
export {
  loadOrCreateToken,
  readTokenFile,
  rotateToken,
  TOKEN_FILE_NAME,
  TOKEN_RECHECK_MS,
  tokenFilePath,
} from "./token_file.ts";
export type { TokenRead } from "./token_file.ts";
export { displayPath, URL_COMMAND } from "./token_page.ts";
export type { TokenHelp } from "./token_page.ts";
export type { CoverageView } from "./coverage_route.ts";
export type { SweepProgressView } from "./sweep_progress.ts";
export { readDaemonFile } from "./daemon_file.ts";
export { searchViaDaemon } from "./daemon_client.ts";
export { hitLink, LINK_NOTE } from "./hit_link.ts";
export type { DaemonPage, Unreachable } from "./daemon_client.ts";
export type { DaemonFile } from "./daemon_file.ts";
export {
  COVERAGE_RESERVE_BYTES,
  SEARCH_PAGE_BUDGET_BYTES,
  SEARCH_RESPONSE_CAP_BYTES,
} from "./coverage_route.ts";
export type { Daemon, DaemonOptions, FirstSweep } from "./daemon.ts";
