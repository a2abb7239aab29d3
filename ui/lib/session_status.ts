/**
 * Which native statuses are live (may still change: the detail view follows the session
 * and offers its controls) and which are over. Mirrors the server's phase table
 * (lib/catalog/pending_question.ts) without importing it (a value import would pull
 * server code into the bundle); the Record type makes a status added to the server's
 * SESSION_STATUSES a type error here until it is placed.
 */
import type { SessionStatus } from "../api_client.ts";

const LIVE: Record<SessionStatus, boolean> = {
  running: true,
  waiting: true,
  completed: false,
  failed: false,
  interrupted: false,
};

/**
 * True for a status that may still change. null (external sessions, an unreadable meta)
 * and a status this build does not know are not live: nothing to follow or control.
 */
export function isLiveStatus(status: string | null | undefined): boolean {
  return typeof status === "string" && Object.hasOwn(LIVE, status) &&
    LIVE[status as SessionStatus];
}
