/**
 * The main transcript's conversation DAG in a full parse: which prose sits on a branch a
 * real /rewind abandoned (formats.md §2.4, "our decision"), plus the small LaneState the
 * incremental rules (claude_lane.ts) continue from.
 *
 * Facts: every user/assistant/system/attachment/progress row links to its parent through
 * `parentUuid`; a compact boundary links through `logicalParentUuid`. /rewind writes
 * nothing itself: the next message is appended with `parentUuid` = the rewind point, so
 * the abandoned branch stays in the file [3p: anthropics/claude-code#87893, observed on
 * 2.1.289]. A rewind to the first prompt writes a new root (`parentUuid: null`).
 * `last-prompt.leafUuid` records the live leaf and is appended throughout a session.
 * Compaction replays re-append older rows with their ORIGINAL uuid/parentUuid/timestamp
 * [3p: #92089, #66947]: the first occurrence of a uuid is the node, later copies are not.
 *
 * Rules (conservative linearization):
 * - Active leaf: the newest `last-prompt.leafUuid` when that line is newer than the last
 *   non-meta user/assistant row and names a known node (then the newest conversation row
 *   below it, so a pointer to a prompt keeps its replies), else that last row.
 * - Active chain: leaf → root through effective parents.
 * - A node is a REWIND FORK when a child other than its first (file order) is a human
 *   row (prose or a typed slash/bash envelope, never tool-result stitching, never the
 *   echo of a queued prompt). Explicit roots are children of a virtual root.
 * - A prose row is abandoned when its path to the chain leaves the chain at a rewind
 *   fork (or crosses one below), unless the row leaving there is a streaming-split twin
 *   of the on-chain child (an assistant row sharing its `message.id`) or a queued
 *   prompt's submission. Everything else that is off
 *   the chain — split siblings, tool-result stitching, attachment/system side branches,
 *   rows cut off by a compaction or a pointer — stays active: no false forks.
 */
import { F_AFTER, F_CONV, F_TURN, LANE_WINDOW, type LaneState } from "./claude_lane.ts";
import type { Row } from "./claude_rows.ts";

interface Node {
  parent: string | null;
  pos: number;
  explicitRoot: boolean;
  conv: boolean;
  msgId: string | null;
  /** The submission of a queued prompt (never a rewind, never abandoned for its place). */
  echo: boolean;
}

/** Key of the virtual root's child list. */
const ROOT = "\u0000";
/** Queued prompts remembered to recognize their echo (bounded). */
const QUEUED_MAX = 64;

/** Builds the DAG row by row (file order), then answers once with {@link finish}. */
export class ClaudeDag {
  readonly #nodes = new Map<string, Node>();
  readonly #children = new Map<string, number>();
  readonly #forks = new Set<string>();
  readonly #conv: string[] = [];
  readonly #recent: string[] = [];
  readonly #queued: string[] = [];
  #lastConv: string | null = null;
  #lastHuman: string | null = null;
  #lastLp: { leaf: string; pos: number } | null = null;

  /** True when `uuid` is already a node (a later copy is not one). */
  has(uuid: string): boolean {
    return this.#nodes.has(uuid);
  }

  /** Adds a non-sidechain row that has a uuid; `pos` grows with the line number. */
  add(row: Row & { uuid: string }, pos: number): void {
    const parentKey = row.parent ?? (row.explicitRoot ? ROOT : null);
    const echo = row.human && row.prose !== null && this.#queued.includes(row.prose);
    this.#nodes.set(row.uuid, {
      parent: row.parent,
      pos,
      explicitRoot: row.explicitRoot,
      conv: row.conv,
      msgId: row.msgId,
      echo,
    });
    if (parentKey !== null) {
      const n = this.#children.get(parentKey) ?? 0;
      this.#children.set(parentKey, n + 1);
      if (n > 0 && row.human && !echo) this.#forks.add(parentKey);
    }
    if (row.conv) {
      this.#conv.push(row.uuid);
      this.#lastConv = row.uuid;
      if (row.human) this.#lastHuman = row.uuid;
    }
    this.#recent.push(row.uuid);
    if (this.#recent.length > LANE_WINDOW) this.#recent.shift();
  }

  /** A `last-prompt` row naming `leaf` at `pos`. */
  lastPrompt(leaf: string, pos: number): void {
    this.#lastLp = { leaf, pos };
  }

  /** A queued prompt (its later submission is not a rewind). */
  enqueue(text: string): void {
    this.#queued.push(text);
    if (this.#queued.length > QUEUED_MAX) this.#queued.shift();
  }

  /** The abandoned subset of `prose` uuids, and the state appends continue from. */
  finish(prose: Iterable<string>): { abandoned: Set<string>; lane: LaneState } {
    const leaf = this.#leaf();
    const chain = new Map<string, string | null>(); // on-chain node → its on-chain child
    let child: string | null = null;
    for (let cur = leaf; cur !== null && !chain.has(cur);) {
      chain.set(cur, child);
      child = cur;
      cur = this.#parentNode(cur);
    }
    const abandoned = new Set<string>();
    const memo = new Map<string, boolean>();
    for (const u of prose) if (this.#abandoned(u, chain, memo)) abandoned.add(u);
    const onChain = (u: string | null) => u === null || chain.has(u);
    return {
      abandoned,
      lane: {
        nodes: this.#nodes.size,
        lastConv: this.#lastConv,
        lastHuman: this.#lastHuman,
        locked: !onChain(this.#lastConv) || !onChain(this.#lastHuman),
        win: this.#recent.map((u) => [u, this.#nodes.get(u)!.parent, this.#flags(u)]),
      },
    };
  }

  #parentNode(u: string): string | null {
    const p = this.#nodes.get(u)?.parent ?? null;
    return p !== null && this.#nodes.has(p) ? p : null;
  }

  #leaf(): string | null {
    const lp = this.#lastLp;
    const convPos = this.#lastConv === null ? -1 : this.#nodes.get(this.#lastConv)!.pos;
    if (!lp || lp.pos < convPos || !this.#nodes.has(lp.leaf)) return this.#lastConv;
    const from = this.#nodes.get(lp.leaf)!.pos;
    const memo = new Map<string, boolean>();
    for (let i = this.#conv.length - 1; i >= 0; i--) {
      const u = this.#conv[i]!;
      if (this.#nodes.get(u)!.pos < from) break;
      if (this.#descends(u, lp.leaf, memo)) return u;
    }
    return lp.leaf;
  }

  /** Whether `u` is `target` or below it; memoized, stops above the target's position. */
  #descends(u: string, target: string, memo: Map<string, boolean>): boolean {
    const floor = this.#nodes.get(target)!.pos;
    const path: string[] = [];
    let verdict = false;
    for (let cur: string | null = u; cur !== null; cur = this.#parentNode(cur)) {
      if (cur === target) verdict = true;
      else if (memo.has(cur)) verdict = memo.get(cur)!;
      else if (this.#nodes.get(cur)!.pos >= floor && path.length <= this.#nodes.size) {
        path.push(cur);
        continue;
      }
      break;
    }
    for (const p of path) memo.set(p, verdict);
    return verdict;
  }

  #abandoned(u: string, chain: Map<string, string | null>, memo: Map<string, boolean>): boolean {
    const path: string[] = [];
    let top: boolean | null = null; // status of the node just above path's last entry
    const seen = new Set<string>();
    for (let cur: string | null = u; cur !== null;) {
      if (chain.has(cur)) {
        top = false;
        break;
      }
      if (memo.has(cur)) {
        top = memo.get(cur)!;
        break;
      }
      if (seen.has(cur)) break; // A parent cycle (corrupt file): treat as a root.
      seen.add(cur);
      path.push(cur);
      cur = this.#parentNode(cur);
    }
    // Resolve top-down: a node is abandoned when its parent is, or when it leaves the
    // chain at a rewind fork (and is not a streaming-split twin of the on-chain child).
    let status = top ?? false;
    for (let i = path.length - 1; i >= 0; i--) {
      const x = path[i]!;
      const n = this.#nodes.get(x)!;
      const p = this.#parentNode(x);
      if (status) {
        // Below an abandoned node: abandoned too.
      } else if (p === null) status = n.explicitRoot && this.#forks.has(ROOT) && chain.size > 0;
      else if (chain.has(p) && this.#forks.has(p)) {
        status = !n.echo && !this.#twin(n, chain.get(p)!);
      }
      memo.set(x, status);
    }
    return memo.get(u) ?? false;
  }

  #twin(n: Node, onChainChild: string | null): boolean {
    const c = onChainChild === null ? undefined : this.#nodes.get(onChainChild);
    return n.msgId !== null && c !== undefined && c.msgId === n.msgId;
  }

  #flags(u: string): number {
    const n = this.#nodes.get(u)!;
    let f = n.conv ? F_CONV : 0;
    if (this.#lastHuman === null || this.#descends(u, this.#lastHuman, new Map())) f |= F_TURN;
    if (!n.conv && this.#lastConv !== null) {
      // Walk up through non-conversation rows only: F_AFTER needs lastConv right above.
      let cur = this.#parentNode(u);
      for (let i = 0; cur !== null && i < LANE_WINDOW; i++) {
        if (cur === this.#lastConv) f |= F_AFTER;
        if (cur === this.#lastConv || this.#nodes.get(cur)!.conv) break;
        cur = this.#parentNode(cur);
      }
    }
    return f;
  }
}
