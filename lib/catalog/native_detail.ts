/**
 * A native session's detail: the spine is paged through its row index (spine_cache.ts,
 * native_page.ts: built once per spine identity, extended when the spine grows, never
 * held whole), and the returned page is hydrated here — sidecar text, tool-call output
 * excerpts and context-snapshot sidecar presence read for those rows only, through
 * contained reads. A spine longer than SPINE_MAX_BYTES ends in a `log_truncated` row.
 */
import { capText } from "../message_search/mod.ts";
import type { SessionMeta } from "../session_log/mod.ts";
import { readMetaInside } from "./native_facts.ts";
import { NativeSpine } from "./native_page.ts";
import type { NativeRow } from "./native_rows.ts";
import { isTurnRel, readExcerpt, readSpanText } from "./native_text.ts";
import type { NativeTool } from "./native_tools.ts";
import { openInside } from "./safe_fs.ts";
import { SPINE_CACHE, type SpineCache } from "./spine_cache.ts";
import {
  type DetailEntry,
  ENTRY_TEXT_CAP_BYTES,
  EXCERPT_CAP_BYTES,
  TOOL_INPUT_CAP_BYTES,
  type ToolCallEntry,
} from "./types.ts";

export { SPINE_MAX_BYTES } from "./spine_read.ts";

/** Options for {@link withNativeSpine}. */
export interface NativeSpineOptions {
  /** @default SPINE_CACHE (process-wide) */
  cache?: SpineCache;
}

/**
 * Runs `fn` with the native session in `dir` ready to page (its meta read through a
 * contained read); the spine's handle and index are held only while `fn` runs.
 */
export async function withNativeSpine<T>(
  dir: string,
  sessionId: string,
  fn: (spine: NativeSpine, meta: SessionMeta | null) => Promise<T>,
  o: NativeSpineOptions = {},
): Promise<T> {
  const meta = await readMetaInside(dir);
  const inputs = {
    sessionId,
    createdAtMs: meta?.created_at_ms ?? null,
    metaTask: meta?.task ?? null,
  };
  return await (o.cache ?? SPINE_CACHE).with(dir, inputs, (h) => fn(new NativeSpine(dir, h), meta));
}

/** The text row `r` shows (what hydrateNative puts in `text`), for the hit scan. */
export async function nativeShownText(dir: string, r: NativeRow): Promise<string | undefined> {
  if (r.span) {
    const t = await readSpanText(dir, r.span, ENTRY_TEXT_CAP_BYTES);
    return t.ok ? t.text : undefined;
  }
  return r.text === undefined ? undefined : capText(r.text, ENTRY_TEXT_CAP_BYTES).text;
}

/** Turns rows [offset, offset + n) into entries, reading their text and excerpts. */
export async function hydrateNative(
  dir: string,
  rows: readonly NativeRow[],
  offset: number,
): Promise<DetailEntry[]> {
  const out: DetailEntry[] = [];
  for (const [i, r] of rows.entries()) {
    const e: DetailEntry = { index: offset + i, kind: r.kind, ts_ms: r.ts_ms, line: r.line };
    const detail: Record<string, unknown> = { ...r.detail };
    if (r.role) e.role = r.role;
    if (r.kind === "message") {
      e.superseded = r.superseded === true;
      e.subagent = false;
      if (r.seq !== undefined) detail.seq = r.seq;
    }
    if (r.text !== undefined) {
      const c = capText(r.text, ENTRY_TEXT_CAP_BYTES);
      e.text = c.text;
      if (c.truncated) detail.text_truncated = true;
    }
    if (r.span) {
      const t = await readSpanText(dir, r.span, ENTRY_TEXT_CAP_BYTES);
      if (t.ok) {
        e.text = t.text;
        detail.text_bytes = t.bytes;
        if (t.truncated) detail.text_truncated = true;
      } else detail.text_unavailable = t.reason;
    }
    if (r.tools) e.tools = await Promise.all(r.tools.map((t) => hydrateTool(dir, t)));
    if (r.kind === "context_snapshot") detail.sidecar = await sidecarState(dir, detail.file);
    e.detail = detail;
    out.push(e);
  }
  return out;
}

/** One tool call with its input capped and its output files excerpted (contained reads). */
async function hydrateTool(dir: string, t: NativeTool): Promise<ToolCallEntry> {
  const input = capText(t.input, TOOL_INPUT_CAP_BYTES);
  const out: ToolCallEntry = {
    name: t.name,
    input: input.text,
    ts_ms: t.ts_ms,
    status: t.status,
    output: {},
  };
  if (input.truncated) out.input_truncated = true;
  if (t.exit_code !== undefined) out.exit_code = t.exit_code;
  if (t.duration_ms !== undefined) out.duration_ms = t.duration_ms;
  for (const [label, rel] of Object.entries(t.files)) {
    const x = await readExcerpt(dir, rel, EXCERPT_CAP_BYTES);
    out.output[label] = x.ok
      ? { excerpt: x.text, truncated: x.truncated, bytes: x.bytes }
      : { unavailable: x.reason };
  }
  if (Object.keys(t.detail).length) out.detail = t.detail;
  return out;
}

/**
 * Whether a context snapshot's sidecar is still on disk: rotation keeps only the latest
 * of each stream (spec: latest-only), so older rows say "gone". Opened, never read.
 */
async function sidecarState(dir: string, rel: unknown): Promise<string> {
  if (typeof rel !== "string" || !isTurnRel(rel)) return "bad_name";
  const opened = await openInside(dir, rel);
  if (!opened.ok) return opened.reason === "missing" ? "gone" : opened.reason;
  await opened.file.close();
  return "on_disk";
}
