/**
 * The MCP server subsystem (`intendant mcp`): Intendant's history as Model Context
 * Protocol tools for coding agents — search_messages, list_sessions, read_session,
 * index_status — answered by the running daemon when there is one, else from the store,
 * every quoted text framed as past conversation and secret-masked, every result bounded.
 * The only public door of lib/mcp/.
 */
export { COLD_SWEEP_STALE_MS, createBackend } from "./backend.ts";
export type { AnsweredBy, BackendOptions, McpBackend } from "./backend.ts";
export { createTeamBackend } from "./team_backend.ts";
export type { OpenedTeamDb, TeamBackend, TeamBackendOptions } from "./team_backend.ts";
export {
  createMcpServer,
  DEFAULT_MAX_OUTPUT_BYTES,
  MAX_MAX_OUTPUT_BYTES,
  MCP_TOOL_NAMES,
  MIN_MAX_OUTPUT_BYTES,
} from "./server.ts";
export type { McpServerOptions } from "./server.ts";
export {
  CLIENT_CONFIG_PLACE,
  clientConfig,
  homeVariables,
  isNpxCachePath,
  MCP_CLIENTS,
  serverCommand,
} from "./client_config.ts";
export type { Launcher, McpClient, ServerCommand } from "./client_config.ts";
export { FRAMING, SUPERSEDED_NOTE } from "./framing.ts";
export { fitMessage, LineTransport, MCP_MAX_LINE_BYTES } from "./line_transport.ts";
