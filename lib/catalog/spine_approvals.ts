/**
 * native_tools.ts foldApprovals, one event at a time, for the spine index: approvals pair
 * with the command_started that follows them (same turn, same command text, first come
 * first served; a denied approval is passed over for good). Where the whole-spine fold
 * knows at once which approval events render no row, an incremental one learns it when
 * the command starts: the rows those events already made are handed back to be hidden.
 * Events of an approval already matched are folded at once (no row).
 * An approval's facts are not kept: its events are listed (SpineIndex apprEv/apprNext) and
 * replayed when a page shows its command (approvalFacts). A slot key is turn + command,
 * or a SHA-256 digest of them past SLOT_PLAIN_MAX chars, so an open approval never pins
 * a long command text (and short ones, nearly all, cost no hashing).
 */
import { createHash } from "node:crypto";
import type { LogEvent } from "../session_log/mod.ts";
import { u8 } from "./spine_columns.ts";
import type { SpineIndex } from "./spine_index.ts";

type Data = Record<string, unknown>;
const str = (v: unknown): string | undefined => (typeof v === "string" ? v : undefined);

/** What one event did to the fold. */
export interface FoldStep {
  /** The event renders no row (its approval already ran its command). */
  folded: boolean;
  /** The approval list entry this event's row (if any) must be recorded in. */
  entry: number;
  /** command_started: the approval it consumed (or -1), and the rows to hide now. */
  matched: number;
  hide: number[];
}

const NONE: FoldStep = { folded: false, entry: -1, matched: -1, hide: [] };

/** The incremental fold over one index. */
export class ApprovalFold {
  #open = new Map<string, number>();
  #matched = new Map<string, number>();
  #queues = new Map<string, { items: number[]; head: number }>();
  #denied = u8();
  /** Per approval: its id. */
  #ids: string[] = [];
  /** Per approval-list entry: the physical row its event made, or -1. */
  #entryRow: number[] = [];

  constructor(readonly idx: SpineIndex) {}

  /** Records the row event `entry`'s line made. */
  setRow(entry: number, row: number): void {
    this.#entryRow[entry] = row;
  }

  step(ev: LogEvent, ordinal: number): FoldStep {
    const d = (ev.data ?? {}) as Data;
    const id = str(d.approval_id);
    if (ev.event === "approval" || ev.event === "auto_approved") {
      const command = str(d.command);
      if (id === undefined || command === undefined) return NONE;
      const auto = ev.event === "auto_approved";
      const known = this.#open.get(id) ?? this.#matched.get(id);
      if (known !== undefined) {
        if (auto) this.#denied.set(known, 0);
        return this.#append(known, ordinal, this.#matched.has(id));
      }
      const a = this.idx.apprHead.push(-1);
      this.idx.apprTail.push(-1);
      this.#denied.push(0);
      this.#ids.push(id);
      this.#open.set(id, a);
      this.#queue(slot(ev, command)).items.push(a);
      return this.#append(a, ordinal, false);
    }
    if (ev.event === "approval_resolved" && id !== undefined) {
      const known = this.#open.get(id) ?? this.#matched.get(id);
      if (known === undefined) return NONE;
      this.#denied.set(known, str(d.decision) === "denied" ? 1 : 0);
      return this.#append(known, ordinal, this.#matched.has(id));
    }
    if (ev.event === "command_started" && typeof d.exec === "string") {
      const q = this.#queues.get(slot(ev, d.exec));
      if (!q) return NONE;
      let a = -1;
      while (q.head < q.items.length) {
        const item = q.items[q.head++]!;
        if (this.#denied.at(item) === 0) {
          a = item;
          break;
        }
      }
      if (q.head === q.items.length) this.#queues.delete(slot(ev, d.exec));
      if (a < 0) return NONE;
      const id = this.#ids[a]!;
      this.#open.delete(id);
      this.#matched.set(id, a);
      const hide: number[] = [];
      for (let e = this.idx.apprHead.at(a); e >= 0; e = this.idx.apprNext.at(e)) {
        const row = this.#entryRow[e] ?? -1;
        if (row >= 0) hide.push(row);
      }
      return { folded: false, entry: -1, matched: a, hide };
    }
    return NONE;
  }

  /** Estimated bytes held. */
  get bytes(): number {
    let n = this.#denied.bytes + this.#entryRow.length * 8 + this.#ids.length * 8;
    for (const m of [this.#open, this.#matched]) for (const k of m.keys()) n += 64 + k.length * 2;
    for (const q of this.#queues.values()) n += 140 + q.items.length * 8;
    return n;
  }

  #queue(key: string): { items: number[]; head: number } {
    let q = this.#queues.get(key);
    if (!q) this.#queues.set(key, q = { items: [], head: 0 });
    return q;
  }

  #append(a: number, ordinal: number, folded: boolean): FoldStep {
    const idx = this.idx;
    const e = idx.apprEv.push(ordinal);
    idx.apprNext.push(-1);
    this.#entryRow[e] = -1;
    const tail = idx.apprTail.at(a);
    if (tail < 0) idx.apprHead.set(a, e);
    else idx.apprNext.set(tail, e);
    idx.apprTail.set(a, e);
    return { folded, entry: folded ? -1 : e, matched: -1, hide: [] };
  }
}

const SLOT_PLAIN_MAX = 160;

function slot(ev: LogEvent, command: string): string {
  const key = `${ev.turn ?? -1}\n${command}`;
  // Digests start with "#", plain keys with the turn number: the two never collide.
  return key.length <= SLOT_PLAIN_MAX
    ? key
    : `#${createHash("sha256").update(key).digest("base64")}`;
}

/**
 * The facts of approval `a` as foldApprovals leaves them: its first event opens them
 * (requested, or auto with a reason), later ones update them in order.
 */
export function approvalFacts(events: readonly LogEvent[]): Data {
  const facts: Data = {};
  events.forEach((ev, i) => {
    const d = (ev.data ?? {}) as Data;
    if (ev.event === "auto_approved") {
      Object.assign(facts, { state: "auto", reason: str(d.reason) });
    } else if (ev.event === "approval") {
      if (i === 0) facts.state = "requested";
    } else if (ev.event === "approval_resolved") {
      Object.assign(facts, { state: str(d.decision), by: str(d.by) });
    }
  });
  return facts;
}
