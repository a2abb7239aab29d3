/**
 * What every source reader accumulates while it walks a file: items in source order,
 * the row ids it saw, skip counts, and the calls still waiting for their result, keyed
 * by the format's call id (Codex call_id, Claude tool_use_id, Kimi/Pi toolCallId).
 * Pairing rules: a result names an open call in the SAME file; calls sharing an id are
 * answered oldest first (a resumed file replaying history repeats ids); a result for an
 * unknown id is counted (`orphan_result`), never invented into a call. Side events only
 * enrich a call (see enrich). Each call is one item: it appears once.
 */
import type { ToolCallEntry } from "../types.ts";
import { countSkip } from "./jsonl_walk.ts";
import { callBytes } from "./tool_text.ts";
import type { ActivityItem, FileActivity, SourcePos } from "./types.ts";

/** Accumulates one file's activity. */
export class ActivityCollector {
  readonly items: ActivityItem[] = [];
  readonly ids = new Map<string, number>();
  readonly parents = new Map<string, string>();
  readonly skipped: Record<string, number> = {};
  #row: string | undefined;
  #open = new Map<string, ToolCallEntry[]>();
  #latest = new Map<string, ToolCallEntry>();

  /**
   * Starts a row of a tree-shaped file: its id (null: a row without one), its parent's.
   * Items pushed until the next row() carry this row's id.
   */
  row(id: string | null, line: number, parent: string | null): void {
    this.id(id, line);
    this.#row = id ?? undefined;
    if (id !== null && parent !== null && !this.parents.has(id)) this.parents.set(id, parent);
  }

  #at(): { row?: string } {
    return this.#row === undefined ? {} : { row: this.#row };
  }

  /** A real user input at `pos`. */
  turn(pos: SourcePos): void {
    this.items.push({ kind: "turn", pos, ...this.#at() });
  }

  /** Remembers that row id `id` sits on `line` (the first line wins). */
  id(id: string | null, line: number): void {
    if (id !== null && !this.ids.has(id)) this.ids.set(id, line);
  }

  /** A call at `pos`; `id` lets a later result find it (null: the call carries its own result). */
  call(pos: SourcePos, by: "agent" | "user", id: string | null, call: ToolCallEntry): void {
    this.items.push({ kind: "call", pos, ...this.#at(), by, call });
    if (id === null) return;
    this.#latest.set(id, call);
    const q = this.#open.get(id);
    if (q) q.push(call);
    else this.#open.set(id, [call]);
  }

  /** Applies a result to the oldest open call named `id` and closes it; false when none is open. */
  result(id: string | null, apply: (call: ToolCallEntry) => void): boolean {
    const q = id === null ? undefined : this.#open.get(id);
    const call = q?.shift();
    if (!call) return false;
    if (q!.length === 0) this.#open.delete(id!);
    apply(call);
    return true;
  }

  /**
   * Adds facts from a side event (Codex exec_command_end, patch_apply_end) to the call
   * named `id` without closing it: the oldest open one (its output item may still
   * follow), else the latest one already answered. False when no call has that id.
   */
  enrich(id: string | null, apply: (call: ToolCallEntry) => void): boolean {
    if (id === null) return false;
    const call = this.#open.get(id)?.[0] ?? this.#latest.get(id);
    if (!call) return false;
    apply(call);
    return true;
  }

  /** A result nobody asked for: counted, dropped. */
  orphan(): void {
    countSkip(this.skipped, "orphan_result");
  }

  /** A context marker at `pos`. */
  snapshot(pos: SourcePos, ts: number | null, detail: Record<string, unknown>): void {
    this.items.push({ kind: "snapshot", pos, ...this.#at(), ts_ms: ts, detail });
  }

  /** The last item, when it is a snapshot (a compaction twin folds into it). */
  lastSnapshot(): Record<string, unknown> | null {
    const last = this.items.at(-1);
    return last?.kind === "snapshot" ? last.detail : null;
  }

  /** The finished, immutable activity. */
  done(): FileActivity {
    let bytes = 256 + (this.ids.size + this.parents.size) * 96;
    for (const it of this.items) {
      bytes += it.kind === "call"
        ? callBytes(it.call)
        : it.kind === "snapshot"
        ? 512 + JSON.stringify(it.detail).length * 2
        : 48;
    }
    return {
      items: this.items,
      ids: this.ids,
      parents: this.parents,
      skipped: this.skipped,
      bytes,
    };
  }
}
