/**
 * Shared shapes of one Kimi extract call: the persisted incremental state, the wires the
 * call works on, and the helpers both the normal and the blocked paths use (display
 * metadata, the title fallback). Rewrite epochs come from the framework's
 * `nextRewriteEpoch` (one past the wire's own cursor, 0 for a wire never read).
 * Invariant: `state` stays small and bounded (one `times` entry per wire, at most the
 * agent cap), because the manifest stores it for every session.
 */
import { z } from "zod";
import type { ClassifiedFile, EntryMeta, PriorShard, SessionUnit } from "../framework/plugin.ts";
import type { KimiUnitHint } from "./kimi_discover.ts";
import type { KimiLimits } from "./kimi_limits.ts";
import type { KimiSessionMeta } from "./kimi_read.ts";

/** Longest title cut from the first user prose, in code points. */
export const TITLE_MAX_CHARS = 100;

/**
 * The persisted carry-over between incremental reads: the block reason (null when the
 * session publishes), the title fallback, and the last effective time per agent (the
 * seed for a next line without its own `time`).
 */
export const KimiStateSchema = z.object({
  v: z.literal(1),
  blocked: z.string().nullable(),
  title: z.string().nullable(),
  times: z.record(z.string(), z.number()),
});
export type KimiState = z.infer<typeof KimiStateSchema>;

/** The prior shard's state if it is a KimiState, else null (the entry flow's `parseState`). */
export function parseKimiState(raw: unknown): KimiState | null {
  const parsed = KimiStateSchema.safeParse(raw);
  return parsed.success ? parsed.data : null;
}

/** One wire of the unit being extracted, as the entry flow classified it this sweep. */
export interface KimiFile extends ClassifiedFile {
  /** Id qualifier (see kimi_pass.ts). */
  agent: string;
  /** Path relative to the home root (locator `file`). */
  rel: string;
}

/** Everything one extract call works with. */
export interface KimiCall {
  unit: SessionUnit;
  hint: KimiUnitHint;
  files: KimiFile[];
  prior: PriorShard | null;
  state: KimiState | null;
  limits: KimiLimits;
  /** True when the saved cursors can be continued (nothing rewritten, gone or dropped). */
  continuable: boolean;
}

/** A cwd longer than any real path is not a project path (state.json may be up to 2 MiB). */
const PROJECT_MAX_CHARS = 4096;

/** Display facts: state.json cwd and title (cut like the fallback), else the first user prose. */
export function entryMeta(
  call: KimiCall,
  meta: KimiSessionMeta | null,
  state: KimiState,
): EntryMeta {
  const cwd = meta?.cwd ?? null;
  return {
    project: cwd !== null && cwd.length <= PROJECT_MAX_CHARS ? cwd : null,
    title: cutTitle(meta?.title ?? null) ?? state.title,
    parent_session_id: null,
    files: call.files.filter((f) => f.stat?.kind === "file").map((f) => f.path),
  };
}

/** Whitespace folded, at most TITLE_MAX_CHARS code points. */
export function cutTitle(text: string | null): string | null {
  if (text === null) return null;
  const flat = text.replace(/\s+/g, " ").trim();
  const points = Array.from(flat);
  return points.length <= TITLE_MAX_CHARS ? flat : points.slice(0, TITLE_MAX_CHARS).join("");
}
