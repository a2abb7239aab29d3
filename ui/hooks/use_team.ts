/**
 * Whether this daemon has a team (`serve --team`), from GET /api/team/status, asked once
 * per page load: the "this machine | team" toggle and the machine filter exist only when
 * it does. A team whose database is down (503 team_unavailable) still counts — the
 * toggle shows, and a team search then says plainly that the database is unavailable.
 * An older daemon without the route (404), `configured: false` or any other failure:
 * no team, and the page stays exactly the local dashboard.
 */
import { useEffect, useState } from "preact/hooks";
import { ApiError, fetchTeamStatus } from "../api_client.ts";

/** The team as the page knows it; null while unknown or when there is none. */
export interface TeamInfo {
  /** This machine's name in the team. */
  machine: string | null;
  /** The team's machines (by name), empty while the database is unreachable. */
  machines: string[];
  /** Why the machine list is empty (the database answered 503), else null. */
  error: string | null;
}

/** The daemon's team, or null. */
export function useTeam(): TeamInfo | null {
  const [team, setTeam] = useState<TeamInfo | null>(null);
  useEffect(() => {
    const ctrl = new AbortController();
    fetchTeamStatus(ctrl.signal).then((st) => {
      if (!st.configured) return;
      setTeam({ machine: st.machine, machines: st.machines.map((m) => m.name), error: null });
    }, (err) => {
      if (err instanceof ApiError && err.status === 503 && err.code === "team_unavailable") {
        setTeam({ machine: null, machines: [], error: err.message });
      }
    });
    return () => ctrl.abort();
  }, []);
  return team;
}
