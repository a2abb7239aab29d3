/**
 * OpenCode's legacy JSON tree (formats-more §6.1): `storage/session/<projectID>/<id>.json`,
 * `storage/message/<sessionID>/<messageID>.json`, `storage/part/<messageID>/<partID>.json`.
 * Older OpenCode wrote files in place; newer ones import the tree into the database once
 * and leave it, so a session found in a database is never read from here (discovery).
 *
 * Change detection: the lstat (inode, size, mtime) of the session file and of every
 * message and part file, hashed — equal to the last publish → "unchanged" without opening
 * a file (only directories are listed). Otherwise every file is read (contained, capped),
 * the same prose rules as the database apply (opencode_prose.ts), and the session is
 * re-derived (framework/sqlite_rederive.ts: the rules for a store rewritten in place).
 * Bounds: `maxLegacyMessages`, `maxLegacyParts` per session (over → fail closed, empty,
 * counted `session_too_large`), `maxLegacyFileBytes` per file (over → that file skipped,
 * counted `file_too_large`). Malformed files are counted, never fatal.
 */
import { createHash } from "node:crypto";
import { join } from "node:path";
import { readContained } from "../../../durable/mod.ts";
import type { FileCursor } from "../../cursor_types.ts";
import {
  countSkip,
  type ExtractOutcome,
  listDirBounded,
  nextRewriteEpoch,
  noteSourceOpen,
  type PriorShard,
  type SessionUnit,
} from "../framework/plugin.ts";
import { isSeenList, rederiveSession, type SeenEntry } from "../framework/sqlite_rederive.ts";
import type { SessionMeta } from "../framework/sqlite_unit.ts";
import { type OcMessage, type OcPart, opencodeProse, parseRevert } from "./opencode_prose.ts";

/** Bounds of one legacy session. */
export interface OpenCodeLegacyLimits {
  maxLegacyMessages: number;
  maxLegacyParts: number;
  maxLegacyFileBytes: number;
}

interface LegacyState {
  v: 1;
  kind: "opencode_legacy";
  sig: string;
  seen: SeenEntry[];
  meta: SessionMeta;
}

function isLegacyState(v: unknown): v is LegacyState {
  const s = v as Partial<LegacyState> | null;
  return typeof s === "object" && s !== null && s.v === 1 && s.kind === "opencode_legacy" &&
    typeof s.sig === "string" && isSeenList(s.seen) && typeof s.meta === "object";
}

interface Walk {
  sig: string;
  messages: { id: string; path: string; parts: { id: string; path: string }[] }[];
  tooMany: boolean;
}

const JSON_FILE = /^([A-Za-z0-9_-]+)\.json$/;
const FATAL = new TextDecoder("utf-8", { fatal: true });

function statLine(path: string): string {
  try {
    const st = Deno.lstatSync(path);
    return `${st.isFile ? "f" : "o"}:${st.ino}:${st.size}:${st.mtime?.getTime()}`;
  } catch (err) {
    if (err instanceof Deno.errors.NotFound || err instanceof Deno.errors.NotADirectory) return "-";
    throw err;
  }
}

async function walk(
  dataDir: string,
  sessionFile: string,
  sessionId: string,
  limits: OpenCodeLegacyLimits,
  skipped: Record<string, number>,
): Promise<Walk> {
  const h = createHash("sha256").update(statLine(sessionFile));
  const messages: Walk["messages"] = [];
  let parts = 0;
  const mdir = join(dataDir, "storage", "message", sessionId);
  for (const e of (await listDirBounded(mdir, { skipped })) ?? []) {
    const m = JSON_FILE.exec(e.name);
    if (!m || !e.isFile) continue;
    if (messages.length >= limits.maxLegacyMessages) return { sig: "", messages, tooMany: true };
    const path = join(mdir, e.name);
    h.update(`\n${e.name} ${statLine(path)}`);
    const pdir = join(dataDir, "storage", "part", m[1]!);
    const list: { id: string; path: string }[] = [];
    for (const pe of (await listDirBounded(pdir, { skipped })) ?? []) {
      const pm = JSON_FILE.exec(pe.name);
      if (!pm || !pe.isFile) continue;
      if (++parts > limits.maxLegacyParts) return { sig: "", messages, tooMany: true };
      const pp = join(pdir, pe.name);
      h.update(`\n ${pe.name} ${statLine(pp)}`);
      list.push({ id: pm[1]!, path: pp });
    }
    messages.push({ id: m[1]!, path, parts: list });
  }
  return { sig: h.digest("hex").slice(0, 32), messages, tooMany: false };
}

async function readJson(
  path: string,
  maxBytes: number,
  skipped: Record<string, number>,
  invalid: string,
): Promise<Record<string, unknown> | null> {
  const r = await readContained(path, { hardlinks: "allow", maxBytes });
  if (!r.ok) {
    if (r.reason !== "missing") {
      countSkip(skipped, r.reason === "too_large" ? "file_too_large" : "not_a_regular_file");
    }
    return null;
  }
  noteSourceOpen();
  let text: string;
  try {
    text = FATAL.decode(r.bytes);
  } catch {
    // Not UTF-8: counted, the rest of the session is still read.
    countSkip(skipped, "invalid_utf8");
    return null;
  }
  try {
    const v = JSON.parse(text);
    if (typeof v === "object" && v !== null && !Array.isArray(v)) return v;
  } catch {
    // Torn or garbage file: counted below like a wrong shape.
  }
  countSkip(skipped, invalid);
  return null;
}

function cursorOf(path: string, now: number, epoch: number): Record<string, FileCursor> {
  const st = Deno.lstatSync(path);
  return {
    [path]: {
      dev: st.dev,
      ino: st.ino ?? 0,
      size: st.size,
      mtime_ms: st.mtime?.getTime() ?? null,
      captured_at_ms: now,
      prefix_len: 0,
      prefix_hash: "",
      offset: st.size,
      anchor_len: 0,
      anchor_hash: "",
      next_line: 1,
      rewrite_epoch: epoch,
    },
  };
}

/** One legacy-tree session (see the header). */
export async function extractOpenCodeLegacy(
  unit: SessionUnit,
  prior: PriorShard | null,
  o: { dataDir: string; limits: OpenCodeLegacyLimits; now: number },
): Promise<ExtractOutcome> {
  const sessionFile = unit.files[0]?.path;
  if (sessionFile === undefined || statLine(sessionFile) === "-") return { kind: "gone" };
  const skipped: Record<string, number> = {};
  const state = prior && isLegacyState(prior.state) ? prior.state : null;
  const w = await walk(o.dataDir, sessionFile, unit.sessionId, o.limits, skipped);
  if (state && !w.tooMany && state.sig === w.sig) return { kind: "unchanged" };
  const epoch = nextRewriteEpoch(prior?.cursors[sessionFile], { shardExists: prior !== null });
  const rel = sessionFile.slice(o.dataDir.length + 1);
  const emptyMeta: SessionMeta = { project: null, title: null, parent_session_id: null };
  if (w.tooMany) {
    return {
      kind: "replace",
      records: [],
      marks: [],
      cursors: cursorOf(sessionFile, o.now, epoch),
      state: { v: 1, kind: "opencode_legacy", sig: "", seen: [], meta: emptyMeta },
      meta: { ...emptyMeta, files: [sessionFile] },
      skipped: { session_too_large: 1 },
    };
  }
  const cap = o.limits.maxLegacyFileBytes;
  const s = await readJson(sessionFile, cap, skipped, "session_invalid") ?? {};
  const messages: OcMessage[] = [];
  const parts: OcPart[] = [];
  for (const m of w.messages) {
    const j = await readJson(m.path, cap, skipped, "message_invalid");
    if (j === null) continue;
    const time = j.time as Record<string, unknown> | undefined;
    const created = typeof time?.created === "number" ? Math.trunc(time.created) : 0;
    messages.push({
      id: typeof j.id === "string" ? j.id : m.id,
      created,
      role: j.role,
      summary: j.summary,
      agent: j.agent,
      mode: j.mode,
    });
    for (const p of m.parts) {
      const pj = await readJson(p.path, cap, skipped, "part_invalid");
      if (pj === null) continue;
      parts.push({
        id: typeof pj.id === "string" ? pj.id : p.id,
        messageId: typeof pj.messageID === "string" ? pj.messageID : m.id,
        type: pj.type,
        text: pj.text as string | undefined,
        synthetic: pj.synthetic,
        ignored: pj.ignored,
      });
    }
  }
  const prose = opencodeProse({
    session: {
      id: unit.sessionId,
      parentId: typeof s.parentID === "string" && s.parentID ? s.parentID : null,
      directory: typeof s.directory === "string" ? s.directory : null,
      title: typeof s.title === "string" ? s.title : null,
      revert: parseRevert(s.revert === undefined ? undefined : JSON.stringify(s.revert)),
    },
    messages,
    parts,
    file: rel,
  });
  const r = rederiveSession({
    source: "opencode",
    sessionId: unit.sessionId,
    current: prose.records,
    priorRecords: prior?.records ?? null,
    priorSeen: state?.seen ?? null,
  });
  for (const [k, n] of Object.entries(prose.skipped)) countSkip(skipped, k, n);
  const keep = r.kind === "append" ? prior?.cursors[sessionFile]?.rewrite_epoch ?? 0 : epoch;
  return {
    kind: r.kind,
    records: r.records,
    marks: r.marks,
    cursors: cursorOf(sessionFile, o.now, keep),
    state: { v: 1, kind: "opencode_legacy", sig: w.sig, seen: r.seen, meta: prose.meta },
    meta: { ...prose.meta, files: [sessionFile] },
    skipped,
  };
}
