/**
 * Goose's legacy sessions, `<data>/sessions/<name>.jsonl` (formats-more §7.5): line 1 is
 * the `SessionMetadata` object when it parses as one (no `role`), every other line a
 * `Message` `{id?, role, created (seconds), content[], metadata?}`. Goose rewrote the
 * whole file on save, so every change is a full read through the shared entry flow
 * (framework/entry_flow.ts: unchanged → no read; torn tail left for the next sweep) and a
 * re-derivation (framework/sqlite_rederive.ts: vanished text stays, superseded).
 * Bounds are Goose's own reader's (`session/legacy.rs`): a file over 50 MiB or with more
 * than 10 000 messages publishes empty (fail closed, counted); a line over 5 MiB is
 * skipped and counted. Bad lines (not JSON, not UTF-8, wrong shape) are counted.
 */
import { readIncrement } from "../../cursor.ts";
import {
  countSkip,
  type ExtractOutcome,
  nextRewriteEpoch,
  type PriorShard,
  runEntryFlow,
  type SessionUnit,
} from "../framework/plugin.ts";
import { isSeenList, rederiveSession, type SeenEntry } from "../framework/sqlite_rederive.ts";
import type { SessionMeta } from "../framework/sqlite_unit.ts";
import { gooseProse, type GooseRow, gooseTitle } from "./goose_prose.ts";

/** Bounds of one legacy file. */
export interface GooseLegacyLimits {
  maxLegacyFileBytes: number;
  maxLegacyLineBytes: number;
  maxLegacyMessages: number;
}

interface LegacyState {
  v: 1;
  kind: "goose_legacy";
  seen: SeenEntry[];
  failed: string | null;
}

function parseState(v: unknown): LegacyState | null {
  const s = v as Partial<LegacyState> | null;
  return typeof s === "object" && s !== null && s.v === 1 && s.kind === "goose_legacy" &&
      isSeenList(s.seen)
    ? s as LegacyState
    : null;
}

const FATAL = new TextDecoder("utf-8", { fatal: true });

/** A JSONL message line → a row (null: not a message). */
export function gooseRowOfJson(v: unknown): GooseRow | null {
  if (typeof v !== "object" || v === null || Array.isArray(v)) return null;
  const o = v as Record<string, unknown>;
  const content = Array.isArray(o.content) ? o.content : null;
  const items = (content ?? []).filter((x): x is Record<string, unknown> =>
    typeof x === "object" && x !== null
  );
  const meta = typeof o.metadata === "object" && o.metadata !== null
    ? o.metadata as Record<string, unknown>
    : {};
  return {
    messageId: typeof o.id === "string" ? o.id : null,
    role: o.role,
    createdSec: o.created,
    userVisible: meta.userVisible,
    contentOk: content !== null,
    hasToolResponse: items.some((x) => x.type === "toolResponse"),
    texts: items.filter((x) => x.type === "text").map((x) => x.text),
  };
}

/** One legacy JSONL session. */
export function extractGooseLegacy(
  unit: SessionUnit,
  prior: PriorShard | null,
  o: { limits: GooseLegacyLimits; now: number; file: string },
): Promise<ExtractOutcome> {
  const L = o.limits;
  return runEntryFlow<LegacyState>(unit, prior, {
    now: o.now,
    flow: {
      parseState,
      full: async ({ unit, prior, files }) => {
        const path = files[0]!.path;
        const inc = await readIncrement(path, null, {
          maxBytes: L.maxLegacyFileBytes + 1,
          maxLineBytes: L.maxLegacyLineBytes,
          rewriteEpoch: nextRewriteEpoch(files[0]!.cursor, { shardExists: prior !== null }),
        });
        const skipped: Record<string, number> = {};
        const state = parseState(prior?.state);
        const emptyMeta: SessionMeta = { project: null, title: null, parent_session_id: null };
        const fail = (reason: string): ExtractOutcome => ({
          kind: "replace",
          records: [],
          marks: [],
          cursors: { [path]: inc.cursor },
          state: { v: 1, kind: "goose_legacy", seen: [], failed: reason } satisfies LegacyState,
          meta: { ...emptyMeta, files: [path] },
          skipped: { [reason]: 1 },
        });
        if (inc.cursor.size > L.maxLegacyFileBytes) return fail("file_too_large");
        if (inc.oversizedLines.length > 0) {
          countSkip(skipped, "oversized_line", inc.oversizedLines.length);
        }
        let project: string | null = null;
        let name: unknown = null;
        const rows: GooseRow[] = [];
        for (const span of inc.lines) {
          let text: string;
          try {
            text = FATAL.decode(
              inc.bytes.subarray(span.start - inc.baseOffset, span.end - inc.baseOffset),
            );
          } catch {
            countSkip(skipped, "invalid_utf8");
            continue;
          }
          if (text.trim() === "") continue;
          let v: unknown;
          try {
            v = JSON.parse(text);
          } catch {
            // Not JSON: data, counted.
            countSkip(skipped, "malformed_line");
            continue;
          }
          const isMeta = span.lineNo === 1 && typeof v === "object" && v !== null &&
            !Array.isArray(v) && !("role" in v);
          if (isMeta) {
            const m = v as Record<string, unknown>;
            project = typeof m.working_dir === "string" ? m.working_dir : null;
            name = m.name ?? m.description;
            continue;
          }
          const row = gooseRowOfJson(v);
          if (row === null) {
            countSkip(skipped, "message_invalid");
            continue;
          }
          rows.push(row);
          if (rows.length > L.maxLegacyMessages) return fail("session_too_large");
        }
        const prose = gooseProse(rows, { file: o.file, subagent: false });
        for (const [k, n] of Object.entries(prose.skipped)) countSkip(skipped, k, n);
        const r = rederiveSession({
          source: "goose",
          sessionId: unit.sessionId,
          current: prose.records,
          priorRecords: prior?.records ?? null,
          priorSeen: state && state.failed === null ? state.seen : null,
        });
        const meta: SessionMeta = {
          project,
          title: gooseTitle(name, prose.firstUser),
          parent_session_id: null,
        };
        const cursor = r.kind === "append"
          ? { ...inc.cursor, rewrite_epoch: prior?.cursors[path]?.rewrite_epoch ?? 0 }
          : inc.cursor;
        return {
          kind: r.kind,
          records: r.records,
          marks: r.marks,
          cursors: { [path]: cursor },
          state: { v: 1, kind: "goose_legacy", seen: r.seen, failed: null } satisfies LegacyState,
          meta: { ...meta, files: [path] },
          skipped,
        };
      },
    },
  });
}
