/**
 * The main transcript's incremental rules: decides, from a SMALL carried state, whether a
 * newly appended row can be applied without re-reading the file, so that the result is
 * exactly what a full parse (claude_dag.ts) would give. Anything it cannot prove returns
 * "full" and the caller re-parses the whole unit (correct, only slower).
 *
 * State: the active leaf candidate (`lastConv`: newest non-meta user/assistant row), the
 * newest human row (`lastHuman`), a node count and a window of the last LANE_WINDOW DAG
 * nodes (uuid, parent, flags) — never a full uuid→parent map. `locked` is set when the
 * last full parse left lastConv or lastHuman off the active chain (a pointer chose
 * another branch): then every conversation row or pointer re-parses.
 *
 * Why the rules are exact (invariant while unlocked: lastConv and lastHuman are on the
 * active chain; a rewind fork needs a human child that is NOT its parent's first child):
 * - a human row whose parent is lastConv, or a non-conversation row written after it
 *   (F_AFTER), continues the chain; any sibling it gains is newer than lastConv, hence
 *   non-conversation, so nothing with prose can become abandoned;
 * - a non-human conversation row under lastHuman's turn (F_TURN) moves the leaf only
 *   inside that turn, where no fork can exist (a fork needs a human newer than lastHuman);
 * - a non-conversation row (system, attachment, progress, isMeta) never moves the leaf
 *   and never starts a fork; it is accepted when its parent is known to the window;
 * - a `last-prompt` naming lastConv, an ancestor of it, or a row after it leaves the
 *   chain's conversation rows unchanged.
 * A uuid already in the window is a replayed copy: skipped, as a full parse skips it.
 * Trade-off: a rewind, a replay burst from older history, or a parent older than the
 * window costs one full re-parse of the unit; steady-state appends never do.
 */
import type { Row } from "./claude_rows.ts";

/** DAG nodes remembered for incremental checks (bounded: it rides in every manifest entry). */
export const LANE_WINDOW = 24;
/** Window flag: a non-meta user/assistant row. */
export const F_CONV = 1;
/** Window flag: descends from lastHuman (or no human row exists yet). */
export const F_TURN = 2;
/** Window flag: a non-conversation row descending from lastConv through such rows only. */
export const F_AFTER = 4;

/** The main lane's carried state. */
export interface LaneState {
  nodes: number;
  lastConv: string | null;
  lastHuman: string | null;
  locked: boolean;
  /** Last LANE_WINDOW DAG nodes in file order: [uuid, effective parent, flags]. */
  win: [string, string | null, number][];
}

/** Verdict on one appended row. */
export type LaneVerdict = "ok" | "dup" | "full";

/** A working view over a LaneState (the map is rebuilt per increment, never persisted). */
export class LaneCursor {
  readonly s: LaneState;
  #byId = new Map<string, number>();

  constructor(state: LaneState) {
    this.s = state;
    for (const [u, , f] of state.win) this.#byId.set(u, f);
  }

  #flags(u: string | null): number | undefined {
    return u === null ? undefined : this.#byId.get(u);
  }

  #parentOf(u: string): string | null | undefined {
    return this.s.win.find((w) => w[0] === u)?.[1];
  }

  /** Applies one DAG row (uuid set, not a sidechain) or says why it cannot. */
  add(row: Row & { uuid: string }): LaneVerdict {
    const s = this.s;
    const u = row.uuid;
    if (this.#byId.has(u) || u === s.lastConv || u === s.lastHuman) return "dup";
    const p = row.parent;
    const pf = this.#flags(p);
    if (s.nodes === 0) return this.#push(u, p, row.conv ? F_CONV | F_TURN : F_TURN, row);
    if (row.conv && (s.locked)) return "full";
    if (row.conv && row.human) {
      const linear = p !== null &&
        (p === s.lastConv || (pf !== undefined && (pf & F_AFTER) !== 0));
      return linear ? this.#push(u, p, F_CONV | F_TURN, row) : "full";
    }
    const inTurn = s.lastHuman === null || (p !== null && p === s.lastHuman) ||
      (pf !== undefined && (pf & F_TURN) !== 0);
    if (row.conv) return inTurn ? this.#push(u, p, F_CONV | F_TURN, row) : "full";
    const known = p === null || p === s.lastConv || p === s.lastHuman || pf !== undefined;
    if (!known) return "full";
    const after = p !== null &&
      (p === s.lastConv || (pf !== undefined && (pf & (F_AFTER | F_CONV)) === F_AFTER));
    return this.#push(u, p, (inTurn ? F_TURN : 0) | (after ? F_AFTER : 0), row);
  }

  /** Whether a `last-prompt` naming `leaf` leaves the active chain's conversation rows as they are. */
  acceptsLeaf(leaf: string): boolean {
    const s = this.s;
    if (s.locked) return false;
    if (s.lastHuman === null || leaf === s.lastConv) return true;
    const f = this.#flags(leaf);
    if (f !== undefined && (f & (F_AFTER | F_CONV)) === F_AFTER) return true;
    // An ancestor of lastConv inside the window.
    let cur: string | null | undefined = s.lastConv;
    for (let i = 0; cur && i <= s.win.length; i++) {
      if (cur === leaf) return true;
      cur = this.#parentOf(cur);
    }
    return false;
  }

  #push(u: string, p: string | null, flags: number, row: Row): LaneVerdict {
    const s = this.s;
    if (row.conv) {
      // Older rows no longer sit after the newest conversation row.
      for (const w of s.win) w[2] &= ~F_AFTER;
      if (row.human) { for (const w of s.win) w[2] &= ~F_TURN; }
      s.lastConv = u;
      if (row.human) s.lastHuman = u;
    }
    s.win.push([u, p, flags]);
    if (s.win.length > LANE_WINDOW) s.win.splice(0, s.win.length - LANE_WINDOW);
    this.#byId = new Map(s.win.map(([id, , f]) => [id, f]));
    s.nodes++;
    return "ok";
  }
}
