/**
 * Turns a team plan's outcome and its hit rows into the page the client sees — the same
 * rules as the local renderer (query/render.ts): highlights and snippets are computed in
 * the app with the local highlight() on the ORIGINAL text (restoreText puts U+0000 back),
 * so ranges are byte-exact; the response budget measures each group's JSON as it is
 * added and always keeps the first group; state and cursor position:
 *  - timeout          partial, no cursor (an unknown subset was searched);
 *  - response budget  partial "budget", position after the last group that fit;
 *  - more groups      ready, position after the page's last group; else ready, none.
 * Also owns the cursor key of a team position: `<machine>/<session_key>` — machine names
 * never contain "/" (machines.name CHECK), so the first "/" splits it unambiguously.
 */
import { highlight, type SearchGroup, type SearchHit, type Source } from "../message_search/mod.ts";
import { restoreText } from "./record_row.ts";
import {
  capLabel,
  capMessage,
  ID_CAP_CHARS,
  PROJECT_CAP_CHARS,
  TITLE_CAP_CHARS,
} from "./read_caps.ts";
import type { HitRow, TeamCandidate, TeamPos, TeamScan } from "./team_plan.ts";

/** A session group of a team page: the local group plus the machine it lives on. */
export interface TeamSearchGroup extends SearchGroup {
  machine: string;
}

/** Bytes reserved for the envelope (state, window_days, cursor, revision, took_ms). */
const ENVELOPE_BYTES = 512;

const enc = new TextEncoder();

/** The cursor key of a team position. */
export function posKey(p: { machine: string; sessionKey: string }): string {
  return `${p.machine}/${p.sessionKey}`;
}

/** The position a cursor key names; null when it is not one posKey made. */
export function parsePosKey(key: string): { machine: string; sessionKey: string } | null {
  const at = key.indexOf("/");
  if (at <= 0) return null;
  return { machine: key.slice(0, at), sessionKey: key.slice(at + 1) };
}

function renderHit(h: HitRow, needles: readonly string[]): SearchHit {
  // The local cap on another machine's text (read_caps.ts): a cut message says so.
  const m = capMessage(restoreText(h.text, h.nul_at));
  const hl = highlight(m.text, needles);
  return {
    record_id: capLabel(h.record_id, ID_CAP_CHARS)!,
    role: h.role === 2 ? "assistant" : "user",
    ts_ms: Number(h.ts_ms),
    seq: h.seq === null ? null : Number(h.seq),
    superseded: h.superseded,
    truncated: h.truncated || m.cut,
    subagent: h.subagent,
    snippet: hl.snippet,
    snippet_offset_bytes: hl.snippetOffsetBytes,
    snippet_cut_end: hl.cutEnd,
    ranges: hl.ranges,
    locator: capLabel(h.locator, ID_CAP_CHARS)!,
  };
}

/** The rendered page; `next` undefined = no cursor, null = from the top. */
export interface TeamRenderedPage {
  state: "ready" | "partial";
  partial_reason?: "timeout" | "budget";
  groups: TeamSearchGroup[];
  next: TeamPos | null | undefined;
}

/** Renders at most `limit` of `scan`'s groups, hits from `rows`, within `budgetBytes`. */
export function renderTeamPage(
  scan: TeamScan,
  rows: readonly HitRow[],
  o: { needles: readonly string[]; limit: number; budgetBytes: number; from: TeamPos | null },
): TeamRenderedPage {
  const byGroup = new Map<number, HitRow[]>();
  for (const r of rows) {
    const list = byGroup.get(r.i);
    if (list) list.push(r);
    else byGroup.set(r.i, [r]);
  }
  const groups: TeamSearchGroup[] = [];
  let used = ENVELOPE_BYTES;
  let cut = false;
  let lastShown: TeamCandidate | null = null;
  const shown = scan.groups.slice(0, o.limit);
  for (let i = 0; i < shown.length; i++) {
    const c = shown[i]!;
    const hits = byGroup.get(i + 1) ?? [];
    const first = hits[0];
    // Every group has ≥ 1 hit under the same snapshot and conditions; a group whose
    // session row is missing cannot occur (FK) — skip rather than invent its facts.
    if (!first) continue;
    const g: TeamSearchGroup = {
      machine: c.machine,
      session_key: c.sessionKey,
      source: first.source as Source,
      session_id: capLabel(first.session_id, ID_CAP_CHARS)!,
      best_ts_ms: c.best,
      total_hits: c.total,
      source_gone: first.source_gone,
      title: capLabel(first.title, TITLE_CAP_CHARS),
      project: capLabel(first.project, PROJECT_CAP_CHARS),
      hits: hits.map((h) => renderHit(h, o.needles)),
    };
    const size = enc.encode(JSON.stringify(g)).length + 1;
    if (groups.length > 0 && used + size > o.budgetBytes) {
      cut = true;
      break;
    }
    used += size;
    groups.push(g);
    lastShown = c;
  }
  const lastPos = (): TeamPos | null =>
    lastShown
      ? { best: lastShown.best, machine: lastShown.machine, sessionKey: lastShown.sessionKey }
      : o.from;
  if (scan.stop === "timeout") {
    return { state: "partial", partial_reason: "timeout", groups, next: undefined };
  }
  if (cut) return { state: "partial", partial_reason: "budget", groups, next: lastPos() };
  return { state: "ready", groups, next: scan.groups.length > o.limit ? lastPos() : undefined };
}
