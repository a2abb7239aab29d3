/**
 * The "this machine | team" switch of the search toolbar, shown only when the daemon has
 * a team (hooks/use_team.ts), and — in team scope — the machine filter: one chip per
 * machine of the team (none pressed = every machine), as toggle buttons with
 * aria-pressed like the source chips. Machine names are schema-checked labels, rendered
 * as text.
 */
import { html } from "htm/preact";
import type { TeamInfo } from "../hooks/use_team.ts";

/** Props of {@link ScopeToggle}. */
export interface ScopeToggleProps {
  team: TeamInfo;
  scope: "local" | "team";
  machines: readonly string[];
  onScope(scope: "local" | "team"): void;
  onMachines(machines: string[]): void;
}

/** The toggle and, in team scope, the machine chips. */
export function ScopeToggle({ team, scope, machines, onScope, onMachines }: ScopeToggleProps) {
  const option = (value: "local" | "team", label: string, tip: string) =>
    html`
      <button type="button" class="chip scope-opt" data-scope=${value} title=${tip}
        aria-pressed=${String(scope === value)} onClick=${() => onScope(value)}>${label}</button>
    `;
  const here = team.machine ? `This machine (${team.machine})` : "This machine";
  // A machine named in the URL but not (or no longer) in the team still shows, pressed,
  // so it can be turned off.
  const names = [...new Set([...team.machines, ...machines])].sort();
  const toggle = (m: string) =>
    onMachines(machines.includes(m) ? machines.filter((x) => x !== m) : [...machines, m]);
  const chips = scope === "team" && names.length > 0 && html`
    <div class="chips machines" role="group" aria-label="Machines">
      ${names.map((m) =>
        html`
          <button type="button" class="chip machine-chip" data-machine=${m}
            aria-pressed=${String(machines.includes(m))} onClick=${() => toggle(m)}>${m}</button>
        `
      )}
    </div>
  `;
  return html`
    <div class="chips scope" role="group" aria-label="Search scope">
      ${option("local", "This machine", `Search ${here}'s own index`)}
      ${option("team", "Team", "Search every machine's published messages (team database)")}
    </div>
    ${chips}
  `;
}
