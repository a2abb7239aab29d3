/**
 * Which indexed records vanished when a transcript was rewritten in place, from a SMALL
 * carried state (it rides in every manifest entry). Copilot CLI rewinds drop the named
 * event and every later one by rewriting `events.jsonl` shorter, leaving no marker
 * (formats-more.md §3.4); the index must keep the vanished prose, flagged superseded.
 *
 * State: the count `n` of records the file held at the last read (in file order), the
 * last WINDOW of them as (record id, text hash), and a hash chain over the ones before
 * the window. After a rewrite the file is re-parsed into `fresh` records (same ids for the
 * same events), then:
 * - the chain must equal the chain over fresh[0, n − window): everything before the
 *   window is still there, unchanged, in order;
 * - the window's longest prefix that fresh continues with (same id AND same text) is
 *   kept; the rest of the window vanished, exactly (a `record_ids` mark);
 * - fresh records after the kept prefix are new (a rewind followed by new prompts).
 * Anything else (a cut deeper than the window, reordered or edited history, a new
 * record reusing a vanished id) is "restart": the caller bumps the generation and
 * re-emits everything, like Codex's in-place rewrite (exact, only less precise: records
 * that survived then appear twice, the older copy superseded).
 * Pure; never throws.
 */
import { hash16Of } from "../../locator.ts";

/** Records kept verbatim in the window (a deeper rewind costs a generation restart). */
export const VANISH_WINDOW = 64;

/** The carried state. */
export interface VanishWindow {
  /** Records of the current generation still in the file at the last read. */
  n: number;
  /** Hash chain over records [0, n − win.length). "" when empty. */
  chain: string;
  /** The last ≤ VANISH_WINDOW records: [record id, hash16 of text]. */
  win: [string, string][];
}

/** One record as the window sees it. */
export interface WindowEntry {
  id: string;
  text: string;
}

/** An empty window. */
export function emptyWindow(): VanishWindow {
  return { n: 0, chain: "", win: [] };
}

function link(chain: string, id: string, h: string): string {
  return hash16Of(`${chain}\u0000${id}\u0000${h}`);
}

/** Notes one more record (mutates `w`). */
export function pushWindow(w: VanishWindow, e: WindowEntry): void {
  w.win.push([e.id, hash16Of(e.text)]);
  w.n++;
  if (w.win.length > VANISH_WINDOW) {
    const [id, h] = w.win.shift()!;
    w.chain = link(w.chain, id, h);
  }
}

/** Narrows a persisted window. */
export function isVanishWindow(v: unknown): v is VanishWindow {
  if (typeof v !== "object" || v === null) return false;
  const w = v as Record<string, unknown>;
  return typeof w.n === "number" && Number.isSafeInteger(w.n) && w.n >= 0 &&
    typeof w.chain === "string" && Array.isArray(w.win) && w.win.length <= w.n &&
    w.win.every((x) =>
      Array.isArray(x) && x.length === 2 && typeof x[0] === "string" && typeof x[1] === "string"
    );
}

/** What a rewrite did to the indexed records. */
export type Reconciled =
  /** fresh[0, keep) are the records already indexed; `vanished` ids left the file. */
  | { kind: "exact"; keep: number; vanished: string[] }
  | { kind: "restart"; reason: string };

/** Compares the re-parsed file with what the window remembers. */
export function reconcile(prior: VanishWindow, fresh: readonly WindowEntry[]): Reconciled {
  const m = prior.n - prior.win.length;
  if (m < 0) return { kind: "restart", reason: "window_invalid" };
  if (fresh.length < m) return { kind: "restart", reason: "cut_below_window" };
  let chain = "";
  for (let i = 0; i < m; i++) chain = link(chain, fresh[i]!.id, hash16Of(fresh[i]!.text));
  if (chain !== prior.chain) return { kind: "restart", reason: "history_changed" };
  let k = 0;
  while (k < prior.win.length && m + k < fresh.length) {
    const [id, h] = prior.win[k]!;
    const f = fresh[m + k]!;
    if (f.id !== id || hash16Of(f.text) !== h) break;
    k++;
  }
  const vanished = prior.win.slice(k).map(([id]) => id);
  const gone = new Set(vanished);
  for (let i = m + k; i < fresh.length; i++) {
    // A vanished id coming back would make ids ambiguous within the shard.
    if (gone.has(fresh[i]!.id)) return { kind: "restart", reason: "id_reused" };
  }
  return { kind: "exact", keep: m + k, vanished };
}
