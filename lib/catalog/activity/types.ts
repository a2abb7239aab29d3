/**
 * The shapes the external-activity readers share (spec "How the Dashboard Consumes the
 * Logs": external replay has full-audit-transcript semantics). A reader turns one source
 * file into ActivityItems — tool calls with their results, user-run commands, context
 * markers and turn starts — each at a SourcePos, plus the row ids (Claude uuid, Pi entry
 * id, Codex item id) the shard's locators name. The join (join.ts) places them against
 * the shard's prose records and adds ActivityRows to the detail.
 * Invariants: items are in source order; a SourcePos is (1-based line, part), part 0 the
 * line itself (where a prose record sits) and parts 1.. the content blocks of that line,
 * so a tool call in the same entry as its text sorts after that text. A FileActivity is
 * immutable once its reader returns it: the cache hands the same object to every request.
 */
import type { ToolCallEntry } from "../types.ts";

/** Where an item sits in its source file. */
export interface SourcePos {
  line: number;
  part: number;
}

/**
 * One thing a source file says happened besides prose. `row` is the id of the row holding
 * it in tree-shaped formats (Claude uuid, Pi entry id), so its branch can be told.
 */
export type ActivityItem =
  /** A real user input (a new turn), whether or not the index holds it as prose. */
  | { kind: "turn"; pos: SourcePos; row?: string }
  /** A tool call (by the agent) or a command the user ran themselves (`!cmd`, bash mode). */
  | { kind: "call"; pos: SourcePos; row?: string; by: "agent" | "user"; call: ToolCallEntry }
  /** A compaction / context marker: shown as a marker, never as prose. */
  | {
    kind: "snapshot";
    pos: SourcePos;
    row?: string;
    ts_ms: number | null;
    detail: Record<string, unknown>;
  };

/** What one source file holds besides prose. */
export interface FileActivity {
  items: ActivityItem[];
  /** Row id → the first line carrying it. */
  ids: Map<string, number>;
  /** Row id → its parent row's id (tree-shaped formats; compact boundaries: the logical parent). */
  parents: Map<string, string>;
  /** Lines not read, by reason (malformed_line, oversized_line, torn_tail). */
  skipped: Record<string, number>;
  /** Rough retained size in bytes (what the cache accounts). */
  bytes: number;
}

/** A row the join adds to an external session's detail. */
export type ActivityRow =
  | {
    kind: "tool_calls";
    ts_ms: number | null;
    tools: ToolCallEntry[];
    /** agent: calls of a turn with no prose before them; user: commands the user ran. */
    by: "agent" | "user";
    superseded: boolean;
    subagent: boolean;
    /** Source file, relative to the tool's home (as locators name it). */
    file: string;
    line: number;
  }
  | {
    kind: "context_snapshot";
    ts_ms: number | null;
    detail: Record<string, unknown>;
    superseded: boolean;
    subagent: boolean;
    file: string;
    line: number;
  };
