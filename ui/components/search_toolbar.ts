/**
 * The quick-search toolbar: the search box (focused on load, Escape clears it, ArrowDown
 * moves into the results), source filter chips (none pressed = every source), and — when
 * the message lane is available and something is typed — role filters and the "Include
 * rewound" toggle. Source chips are those with sessions in the index (lib/sources.ts
 * chipSources) plus any pressed. Chips are toggle buttons with aria-pressed, so their state is
 * announced and they sit in the tab order. A filter is only ever shown where it applies:
 * role and rewound filters act on message search alone, so they are hidden (and say
 * nothing) while the plain recent list shows; the source chips apply to both views and
 * the list names them when they filter it (session_list.ts). When the daemon has a team
 * (and only then) the "this machine | team" scope switch and, in team scope, the machine
 * chips follow the source chips (scope_toggle.ts).
 */
import { html } from "htm/preact";
import type { Ref } from "preact";
import type { ListState, Role } from "../lib/route.ts";
import type { CoverageView } from "../api_client.ts";
import { chipSources, SOURCE_LABEL } from "../lib/sources.ts";
import { focusFirstResult } from "../lib/result_nav.ts";
import type { TeamInfo } from "../hooks/use_team.ts";
import { ScopeToggle } from "./scope_toggle.ts";

export type { Role };

/** The search model the toolbar edits (it lives in the URL: lib/route.ts). */
export type SearchModel = ListState;

/** Props of {@link SearchToolbar}. */
export interface SearchToolbarProps {
  model: SearchModel;
  onChange(next: SearchModel): void;
  messageLane: boolean;
  inputRef: Ref<HTMLInputElement>;
  /** What the index holds (null until it answers): which source chips to show. */
  coverage: CoverageView | null;
  /** The daemon's team (null: none, and no scope switch is rendered). */
  team?: TeamInfo | null;
}

const ROLES: [Role, string][] = [["user", "User"], ["assistant", "Assistant"]];

function toggle<T>(list: readonly T[], v: T): T[] {
  return list.includes(v) ? list.filter((x) => x !== v) : [...list, v];
}

function chip(label: string, pressed: boolean, onClick: () => void, cls = "") {
  return html`
    <button type="button" class=${`chip ${cls}`} aria-pressed=${String(pressed)}
      onClick=${onClick}>${label}</button>
  `;
}

/** The toolbar. */
export function SearchToolbar(
  { model, onChange, messageLane, inputRef, coverage, team = null }: SearchToolbarProps,
) {
  const set = (patch: Partial<SearchModel>) => onChange({ ...model, ...patch });
  const onInput = (e: Event) => set({ q: (e.currentTarget as HTMLInputElement).value });
  const onKeyDown = (e: KeyboardEvent) => {
    if (e.key === "ArrowDown") {
      if (focusFirstResult()) e.preventDefault();
      return;
    }
    if (e.key !== "Escape" || !model.q) return;
    e.preventDefault();
    set({ q: "" });
  };
  const onSuperseded = (e: Event) =>
    set({ includeSuperseded: (e.currentTarget as HTMLInputElement).checked });
  const sources = chipSources(coverage, model.sources).map((s) =>
    chip(SOURCE_LABEL[s], model.sources.includes(s), () => {
      set({ sources: toggle(model.sources, s) });
    }, `src-${s}`)
  );
  const roles = ROLES.map(([r, label]) =>
    chip(label, model.roles.includes(r), () => set({ roles: toggle(model.roles, r) }))
  );
  const messageFilters = messageLane && model.q.trim() !== "" && html`
    <div class="chips" role="group" aria-label="Message roles">${roles}</div>
    <label class="switch">
      <input type="checkbox" id="include-superseded" checked=${model.includeSuperseded}
        onChange=${onSuperseded} />
      <span>Include rewound messages</span>
    </label>
  `;
  const scope = messageLane && team && html`
    <${ScopeToggle} team=${team} scope=${model.scope === "team" ? "team" : "local"}
      machines=${model.machines ?? []}
      onScope=${(v: "local" | "team") => {
        const { scope: _s, machines: _m, ...local } = model;
        onChange(v === "team" ? { ...local, scope: "team" } : local);
      }}
      onMachines=${(m: string[]) => {
        const { machines: _m, ...rest } = model;
        onChange(m.length ? { ...rest, machines: m } : rest);
      }} />
  `;
  const label = messageLane ? "Search sessions and messages" : "Filter sessions";
  const placeholder = messageLane
    ? "Search sessions and messages…"
    : "Filter sessions by name, project or id…";

  return html`
    <div class="toolbar" role="search">
      <div class="search-box">
        <label for="q" class="sr-only">${label}</label>
        <input id="q" ref=${inputRef} type="search" autocomplete="off" spellcheck="false"
          value=${model.q} placeholder=${placeholder} onInput=${onInput} onKeyDown=${onKeyDown} />
      </div>
      <div class="filters">
          <div class="chips sources" role="group" aria-label="Sources">${sources}</div>
          ${scope}
          ${messageFilters}
        </div>
    </div>
  `;
}
