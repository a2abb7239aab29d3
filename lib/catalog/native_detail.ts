/**
 * A native session's detail model: the spine read through a contained read (at most
 * SPINE_MAX_BYTES; a longer spine ends in a `log_truncated` row), parsed with the shared
 * line splitter (complete lines only), turned into rows, supersession applied, and the
 * returned page hydrated (sidecar text, tool-call output excerpts and context-snapshot
 * sidecar presence read for those rows only).
 * Legacy rows before an epoch marker get their seq through the marker's [seq, role,
 * hash16] mapping, as the extractor correlates them, so later cuts flag them too.
 */
import { capText, hash16Of, RECORD_TEXT_CAP_BYTES } from "../message_search/mod.ts";
import {
  parseEvents,
  type ReadEvent,
  SESSION_JSONL,
  type SessionMeta,
} from "../session_log/mod.ts";
import { readMetaInside } from "./native_facts.ts";
import { applyCuts, buildNativeRows, eraOf, type NativeRow } from "./native_rows.ts";
import { isTurnRel, readExcerpt, readSpanText } from "./native_text.ts";
import type { NativeTool } from "./native_tools.ts";
import { openInside, readInside } from "./safe_fs.ts";
import {
  type DetailEntry,
  ENTRY_TEXT_CAP_BYTES,
  EXCERPT_CAP_BYTES,
  TOOL_INPUT_CAP_BYTES,
  type ToolCallEntry,
} from "./types.ts";

/** Largest spine the detail view parses. */
export const SPINE_MAX_BYTES = 256 * 1024 * 1024;

/** Everything the detail view and jump-to-hit need from one native session. */
export interface NativeModel {
  dir: string;
  meta: SessionMeta | null;
  events: ReadEvent[];
  rows: NativeRow[];
  /** Complete lines in the spine as read (for "shorter than the line" checks). */
  lineCount: number;
  /** Why the spine could not be read, when it could not ("missing" for a fresh dir). */
  spineRefused: string | null;
  /** The spine is longer than SPINE_MAX_BYTES: only its head was read. */
  spineTruncated: boolean;
}

/** Loads the model of the native session in `dir`. */
export async function loadNative(dir: string): Promise<NativeModel> {
  const meta = await readMetaInside(dir);
  const spine = await readInside(dir, SESSION_JSONL, { maxBytes: SPINE_MAX_BYTES });
  const bytes = spine.ok ? spine.bytes : new Uint8Array(0);
  const { events } = parseEvents(bytes);
  let lineCount = 0;
  for (let i = bytes.indexOf(0x0a); i >= 0; i = bytes.indexOf(0x0a, i + 1)) lineCount++;
  const rows = buildNativeRows(events, {
    createdAtMs: meta?.created_at_ms ?? null,
    metaTask: meta?.task ?? null,
  });
  await correlateLegacy(dir, events, rows);
  applyCuts(rows);
  if (spine.ok && spine.truncated) {
    rows.push({
      kind: "log_truncated",
      ts_ms: null,
      line: lineCount,
      detail: { read_bytes: bytes.length, size: spine.size },
    });
  }
  return {
    dir,
    meta,
    events,
    rows,
    lineCount,
    spineRefused: spine.ok ? null : spine.reason,
    spineTruncated: spine.ok && spine.truncated,
  };
}

/** Gives legacy message rows (before the epoch marker) the seq the marker maps them to. */
async function correlateLegacy(dir: string, events: ReadEvent[], rows: NativeRow[]) {
  const { epochAt } = eraOf(events);
  if (epochAt < 0 || !rows.some((r) => r.kind === "cut")) return;
  const marker = events[epochAt]!;
  const mapping = [
    ...((marker.event.data as { mapping?: [number, string, string][] })?.mapping ?? []),
  ];
  for (const r of rows) {
    if (r.kind !== "message" || r.line >= marker.lineNo || r.seq !== undefined || !r.role) continue;
    let text = r.text;
    if (text === undefined && r.span) {
      const read = await readSpanText(dir, r.span, RECORD_TEXT_CAP_BYTES + 4);
      text = read.ok ? read.text : undefined;
    }
    if (text === undefined) continue;
    const h = hash16Of(text);
    const at = mapping.findIndex(([, role, mh]) => role === r.role && mh === h);
    if (at >= 0) r.seq = mapping.splice(at, 1)[0]![0];
  }
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
