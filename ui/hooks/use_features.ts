/**
 * What this daemon offers, from GET /api/routes (feature detection by operation name),
 * combined with the page's own escape hatch (`?message_search=off`). Unknown until the
 * answer arrives: the message lane stays hidden meanwhile rather than guessing, and an
 * older daemon without the route (or without /api/routes at all) simply never shows it.
 */
import { useEffect, useState } from "preact/hooks";
import { fetchOperations } from "../api_client.ts";
import { messageLaneAllowed } from "../lib/route.ts";

export const MESSAGE_SEARCH_OPERATION = "api_sessions_message_search";

/** Feature flags; false while unknown. */
export interface Features {
  messageSearch: boolean;
  /** True once the flags are final (the daemon answered, or the page turned the lane off). */
  known: boolean;
}

/** The daemon's features. */
export function useFeatures(): Features {
  const allowed = messageLaneAllowed(location.search);
  const [ops, setOps] = useState<Set<string> | null>(null);
  useEffect(() => {
    if (!allowed) return;
    const ctrl = new AbortController();
    fetchOperations(ctrl.signal).then(setOps, () => setOps(new Set()));
    return () => ctrl.abort();
  }, [allowed]);
  return {
    messageSearch: allowed && ops !== null && ops.has(MESSAGE_SEARCH_OPERATION),
    known: !allowed || ops !== null,
  };
}
