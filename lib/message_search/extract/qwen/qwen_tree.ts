/**
 * Qwen Code's uuid tree → records + supersession marks, as a full pass or an exact append.
 * Pure: no I/O.
 *
 * Tree rules (FORMAT.md §4, [src] `reconstructHistory`, `rewindRecording`): the
 * active conversation is the parentUuid chain from the leaf back to a root. Qwen takes the
 * last record of the file as the leaf; we take the last LEAF-ELIGIBLE one (a non-sidechain
 * user / assistant / tool_result record or a `system/rewind` marker), because metadata
 * records Qwen re-appends near EOF (every ~32 KiB, METADATA_REANCHOR_BYTES) and
 * interleaved subagent records would otherwise move the leaf off the conversation. A
 * `/rewind` appends a `system/rewind` record whose parent is the turn before the target;
 * later records hang off it, so the abandoned turns fall off the chain. Non-sidechain
 * prose off the chain is superseded by ONE `record_ids` mark after every record (still
 * searchable); sidechain (subagent) records are outside the main chain by construction and
 * never superseded. A branch not explained by a rewind (newest Qwen refuses such a file)
 * is marked the same way and counted as `unexplained_branch`. Compression records keep the
 * originals: not supersession.
 * Records: one per uuid whose aggregated lines are prose (qwen_lines.ts), record id = the
 * uuid, ordered by the line where its prose first became non-empty (so an append can
 * never need to insert before an existing record), time = the uuid's first line.
 *
 * Incremental rule: new lines are applied without re-reading only when the chain just
 * grows: a non-sidechain line continues the head uuid (the last non-sidechain line) or
 * hangs off it with a new uuid, while the head's chain still reaches the leaf (`linear`);
 * a sidechain line continues the last sidechain uuid or starts a new one. A continuation
 * that would change the text of an already published record, or anything else (a rewind
 * marker, a new root, a branch), returns null and the caller re-parses in full. Under
 * those rules no earlier record changes side and every new record is active, so the
 * result equals a full pass (a hand-made line reusing an OLDER uuid is merged by the full
pass only: the next full pass corrects it, as for Pi). State stays small: the leaf, the head and the last sidechain
 * node (without published text), title facts.
 */
import { hash16Of } from "../../locator.ts";
import { capText, type MessageRecord, type SupersessionMark } from "../../record.ts";
import { foldedTitle } from "../framework/plugin.ts";
import {
  isLeafEligible,
  mergeLine,
  nodeOf,
  parseLine,
  proseOfNode,
  type QwenLine,
  type QwenNode,
} from "./qwen_lines.ts";

/** The tail node the append path continues: its facts, and whether it was published. */
export interface TipNode extends QwenNode {
  published: boolean;
}

/** Persisted carry-over between sweeps (bounded). */
export interface QwenState {
  v: 1;
  leaf: string | null;
  /** Last non-sidechain line's node. */
  head: TipNode | null;
  /** The head's chain reaches the leaf (nothing branched after it). */
  linear: boolean;
  /** Last sidechain line's node. */
  side: TipNode | null;
  /** Distinct uuids so far (the record bound). */
  nodes: number;
  cwd: string | null;
  title: string | null;
  first_user: string | null;
  parent: string | null;
  failed: string | null;
}

/** Longest carried unpublished text (it is whitespace in practice): longer → full pass. */
const TIP_TEXT_MAX = 1024;

/** Narrows a persisted state; anything else means "no usable state". */
export function isQwenState(v: unknown): v is QwenState {
  if (typeof v !== "object" || v === null) return false;
  const s = v as Record<string, unknown>;
  const strOrNull = (x: unknown) => x === null || typeof x === "string";
  const tip = (x: unknown) =>
    x === null || (typeof x === "object" && typeof (x as TipNode).uuid === "string" &&
      typeof (x as TipNode).text === "string" && typeof (x as TipNode).published === "boolean");
  return s.v === 1 && strOrNull(s.leaf) && tip(s.head) && tip(s.side) &&
    typeof s.linear === "boolean" && Number.isSafeInteger(s.nodes) && strOrNull(s.cwd) &&
    strOrNull(s.title) && strOrNull(s.first_user) && strOrNull(s.parent) && strOrNull(s.failed);
}

/** Fixed facts of one pass. */
export interface QwenPassContext {
  sessionId: string;
  /** Locator `file`: path relative to the runtime base. */
  file: string;
  maxNodes: number;
}

/** What a pass produced. */
export interface QwenPassResult {
  records: MessageRecord[];
  marks: SupersessionMark[];
  state: QwenState;
  skipped: Record<string, number>;
}

/** One input line: decoded text (null: invalid UTF-8). */
export interface QwenInputLine {
  text: string | null;
}

function toRecord(
  ctx: QwenPassContext,
  n: QwenNode,
  p: { role: "user" | "assistant"; text: string },
  ts: number,
  order: number,
): MessageRecord {
  const capped = capText(p.text);
  return {
    id: n.uuid,
    source: "qwen",
    session_id: ctx.sessionId,
    role: p.role,
    ts_ms: ts,
    text: capped.text,
    truncated: capped.truncated,
    locator: {
      v: 1,
      kind: "external_record_id",
      record_id: n.uuid,
      file: ctx.file,
      hash: hash16Of(capped.text),
    },
    order,
    generation: 0,
    subagent: n.sidechain,
  };
}

/** Folds file-level facts (cwd, title, parent) from one line into the state. */
function noteFacts(s: QwenState, l: QwenLine): void {
  s.cwd ??= l.cwd;
  if (l.title !== null) s.title = l.title;
  s.parent ??= l.parentSession;
}

function tip(n: QwenNode, published: boolean): TipNode {
  return { ...n, published };
}

function emptyState(): QwenState {
  return {
    v: 1,
    leaf: null,
    head: null,
    linear: true,
    side: null,
    nodes: 0,
    cwd: null,
    title: null,
    first_user: null,
    parent: null,
    failed: null,
  };
}

/** Parses every line and derives records and the one mark; `failed` past the bound. */
export function fullPass(
  lines: Iterable<QwenInputLine>,
  ctx: QwenPassContext,
  skipped: Record<string, number> = {},
): QwenPassResult | { failed: string; skipped: Record<string, number> } {
  const state = emptyState();
  const nodes = new Map<string, QwenNode>();
  /** uuid → order of its record, in the order prose first appeared. */
  const published: string[] = [];
  const isPublished = new Set<string>();
  for (const { text } of lines) {
    const l = parseLine(text, skipped);
    if (l === null) continue;
    noteFacts(state, l);
    let n = nodes.get(l.uuid);
    if (n) mergeLine(n, l);
    else {
      n = nodeOf(l);
      nodes.set(l.uuid, n);
      if (nodes.size > ctx.maxNodes) return { failed: "too_many_records", skipped };
    }
    if (!isPublished.has(n.uuid) && proseOfNode(n) !== null && n.ts_ms !== null) {
      isPublished.add(n.uuid);
      published.push(n.uuid);
    }
    if (l.sidechain) state.side = tip(n, isPublished.has(n.uuid));
    else state.head = tip(n, isPublished.has(n.uuid));
    if (isLeafEligible(l)) state.leaf = l.uuid;
  }
  const onChain = chainOf(state.leaf, nodes);
  const headChain = chainOf(state.head?.uuid ?? null, nodes);
  state.linear = state.leaf === null || headChain.has(state.leaf);
  state.nodes = nodes.size;
  const records: MessageRecord[] = [];
  const superseded: string[] = [];
  for (const uuid of published) {
    const n = nodes.get(uuid)!;
    const p = proseOfNode(n)!;
    records.push(toRecord(ctx, n, p, n.ts_ms!, records.length));
    if (!n.sidechain && !onChain.has(uuid)) superseded.push(uuid);
    if (state.first_user === null && p.role === "user" && !n.sidechain) {
      state.first_user = foldedTitle(p.text);
    }
  }
  for (const n of nodes.values()) {
    if (n.ts_ms === null && proseOfNode(n) !== null) {
      skipped.bad_timestamp = (skipped.bad_timestamp ?? 0) + 1;
    }
  }
  if (superseded.length > 0 && !hasRewindOnChain(nodes, onChain)) {
    skipped.unexplained_branch = (skipped.unexplained_branch ?? 0) + 1;
  }
  if (state.head) state.head = trimTip(state.head);
  if (state.side) state.side = trimTip(state.side);
  const marks: SupersessionMark[] = superseded.length > 0
    ? [{ kind: "record_ids", after_order: records.length, ids: superseded }]
    : [];
  return { records, marks, state, skipped };
}

/**
 * A published tip never needs its text again (any more text forces a full pass). An
 * unpublished one with a long text (a non-prose record: tool output, a machine notice) is
 * carried as if published, which also forces a full pass on more text: the state stays
 * small and the answer stays exact.
 */
function trimTip(t: TipNode): TipNode {
  const long = t.text.length > TIP_TEXT_MAX || (t.display?.length ?? 0) > TIP_TEXT_MAX;
  return t.published || long ? { ...t, published: true, text: "", display: null } : t;
}

/** The uuids on `leaf`'s parent chain (cycle-safe). */
function chainOf(leaf: string | null, nodes: Map<string, QwenNode>): Set<string> {
  const on = new Set<string>();
  for (let cur = leaf; cur !== null && !on.has(cur);) {
    const n = nodes.get(cur);
    if (!n) break;
    on.add(cur);
    cur = n.parentUuid;
  }
  return on;
}

function hasRewindOnChain(nodes: Map<string, QwenNode>, onChain: Set<string>): boolean {
  for (const n of nodes.values()) {
    if (n.type === "system" && n.subtype === "rewind" && onChain.has(n.uuid)) return true;
  }
  return false;
}

function skippedTotal(skipped: Record<string, number>): number {
  let n = 0;
  for (const v of Object.values(skipped)) n += v;
  return n;
}

/**
 * Applies appended lines to `prior` when the chain only grows (see the header); null when
 * only a full pass can answer. `nextOrder` = records already in the shard.
 */
export function appendPass(
  lines: Iterable<QwenInputLine>,
  prior: QwenState,
  nextOrder: number,
  ctx: QwenPassContext,
  skipped: Record<string, number> = {},
): QwenPassResult | null {
  if (prior.failed !== null) return null;
  const state: QwenState = { ...prior };
  const records: MessageRecord[] = [];
  for (const { text } of lines) {
    const before = skippedTotal(skipped);
    const l = parseLine(text, skipped);
    // A line the parser refused is hostile input: its neighbours' standing (a uuid it
    // shadows, a parent it names) is for the full pass to decide, which the reliability
    // fuzz proves loses no valid line; the append path stays the steady-state fast path.
    if (skippedTotal(skipped) !== before) return null;
    if (l === null) continue;
    const cur = l.sidechain ? state.side : state.head;
    let n: TipNode;
    if (cur !== null && l.uuid === cur.uuid) {
      if (cur.published) {
        // More text for a published record changes it: only a full pass can say how.
        if (l.text.length > 0 || l.display !== null) return null;
        n = cur;
      } else {
        n = { ...cur };
        mergeLine(n, l);
      }
    } else {
      if (!l.sidechain && (!state.linear || l.parentUuid !== (state.head?.uuid ?? null))) {
        return null; // A branch, a new root, a rewind marker: the tree's shape changes.
      }
      if (!l.sidechain && state.head === null && state.leaf !== null) return null;
      if (state.nodes + 1 > ctx.maxNodes) return null;
      state.nodes++;
      n = { ...nodeOf(l), published: false };
    }
    noteFacts(state, l);
    const p = n.published ? null : proseOfNode(n);
    if (p !== null && n.ts_ms !== null) {
      records.push(toRecord(ctx, n, p, n.ts_ms, nextOrder + records.length));
      n = { ...n, published: true };
      if (state.first_user === null && p.role === "user" && !n.sidechain) {
        state.first_user = foldedTitle(p.text);
      }
    }
    if (l.sidechain) state.side = trimTip(n);
    else state.head = trimTip(n);
    if (isLeafEligible(l)) state.leaf = l.uuid;
  }
  return { records, marks: [], state, skipped };
}
