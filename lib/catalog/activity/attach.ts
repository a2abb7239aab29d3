/**
 * The door of lib/catalog/activity/: gives an external session's detail model its tool
 * calls and context markers (spec "How the Dashboard Consumes the Logs": full-audit
 * replay). The manifest entry's `meta.files` names the source files; each is opened
 * contained in the tool's home — derived from a record whose locator names it
 * (absolute path = home + "/" + locator file), so every directory between the home and
 * the file is checked too — or, for a file no record names, its own directory. For a
 * source whose home rule names read roots (lib/source_homes.ts: Gemini `tmp/`, Qwen
 * `projects/`, Copilot `session-state/`, Cursor `projects/`, Droid `sessions/` and
 * `projects/`), the open is contained in the read root that holds the file, not the home:
 * the locked daemon is granted exactly those roots (lib/permissions.ts sourceReadGrants),
 * and an lstat of the home itself was refused (NotCapable) — every tool call of those five
 * sources vanished under `serve --locked`. The read needs what the profile grants, and
 * nothing wider is granted for it.
 * Bounds: at most ACTIVITY_MAX_SESSION_BYTES read per session over all its files (the
 * rest is reported truncated/unavailable), lines capped (jsonl_walk.ts), parses cached
 * (cache.ts). Fail-closed: a gone, missing, refused (symlink, hardlink, not regular) or
 * unreadable file leaves its tools out and says so in `activity`; the prose rows, their
 * order and flags are never touched, so paging and jump-to-hit keep working.
 */
import { basename, dirname, isAbsolute, join } from "node:path";
import type { MessageRecord, Source } from "../../message_search/mod.ts";
import { type HomeRule, SOURCE_HOME_RULES } from "../../source_homes.ts";
import type { ExternalModel } from "../external_detail.ts";
import type { ActivityStatus, KeptCopy } from "../types.ts";
import { ACTIVITY_CACHE, type ActivityCache } from "./cache.ts";
import { claudeActivity, claudeRecordLine, claudeSubagentFile } from "./claude.ts";
import { codexActivity, codexRecordLine } from "./codex.ts";
import { copilotActivity, copilotRecordLine } from "./copilot.ts";
import { cursorActivity, cursorRecordLine, cursorSubagentFile } from "./cursor.ts";
import { droidActivity, droidRecordLine } from "./droid.ts";
import { geminiActivity, geminiRecordLine, geminiSubagentFile } from "./gemini.ts";
import { joinActivity, type JoinFile } from "./join.ts";
import { kimiActivity, kimiRecordLine, kimiSubagentFile } from "./kimi.ts";
import { piActivity, piRecordLine } from "./pi.ts";
import { qwenActivity, qwenRecordLine } from "./qwen.ts";
import { readSource, type SourceFile } from "./read_source.ts";
import type { FileActivity } from "./types.ts";

/** Most bytes read from one session's source files per detail request. */
export const ACTIVITY_MAX_SESSION_BYTES = 64 * 1024 * 1024;

/** What the join needs to know about one source's format. */
interface SourceSpec {
  parse(bytes: Uint8Array, ctx: { sessionId: string }): FileActivity;
  lineOf(rec: MessageRecord, act: FileActivity): number | null;
  subagent(rel: string): boolean;
}

const SPECS: Partial<Record<Source, SourceSpec>> = {
  codex: { parse: codexActivity, lineOf: codexRecordLine, subagent: () => false },
  "claude-code": {
    parse: claudeActivity,
    lineOf: claudeRecordLine,
    subagent: claudeSubagentFile,
  },
  kimi: { parse: kimiActivity, lineOf: kimiRecordLine, subagent: kimiSubagentFile },
  pi: { parse: piActivity, lineOf: piRecordLine, subagent: () => false },
  gemini: { parse: geminiActivity, lineOf: geminiRecordLine, subagent: geminiSubagentFile },
  // Qwen and Copilot sub-agents write into the session's own file (sidechain / agentId
  // records): no file is a sub-agent's; their records carry the flag.
  qwen: { parse: qwenActivity, lineOf: qwenRecordLine, subagent: () => false },
  copilot: { parse: copilotActivity, lineOf: copilotRecordLine, subagent: () => false },
  cursor: { parse: cursorActivity, lineOf: cursorRecordLine, subagent: cursorSubagentFile },
  // A Droid sub-agent file's path looks like any session's; its records carry the flag.
  droid: { parse: droidActivity, lineOf: droidRecordLine, subagent: () => false },
  // OpenCode and Goose keep sessions in SQLite: their calls live in DB rows (OpenCode
  // `part` tool rows, Goose toolRequest/toolResponse content), and this reader takes one
  // file's bytes, so their detail shows prose without tool calls until a DB reader exists.
};

/** Sources whose sessions live in a database: their detail says why it has no tool calls. */
const DATABASE_SOURCES: ReadonlySet<Source> = new Set(["opencode", "goose"]);

/** Options for {@link attachActivity}. */
export interface AttachOptions {
  /** @default ACTIVITY_CACHE (process-wide) */
  cache?: ActivityCache;
  /** @default ACTIVITY_MAX_SESSION_BYTES */
  maxBytes?: number;
  /** The vault's copies: a gone session's tool calls are read from them. */
  keptCopy?: KeptCopy;
}

/** One of the entry's files, located for a contained open. */
export interface Located extends SourceFile {
  /** The path locators name (relative to the home), or the base name when no home is known. */
  shown: string;
}

/**
 * `f` contained in the read root of `source` that holds it (see the header); `f` itself
 * when the rule grants the whole home or no read root holds the file (the read then says
 * why it failed). `shown` stays the path locators name.
 */
export function withinReadRoot(source: Source, f: Located): Located {
  const rule: HomeRule | undefined = Object.hasOwn(SOURCE_HOME_RULES, source)
    ? SOURCE_HOME_RULES[source as keyof typeof SOURCE_HOME_RULES]
    : undefined;
  for (const r of rule?.readRoots ?? []) {
    if (r === "" || !f.rel.startsWith(`${r}/`)) continue;
    return { ...f, root: join(f.root, r), rel: f.rel.slice(r.length + 1) };
  }
  return f;
}

/** Where each of the entry's files is, relative to the tool home its records name. */
function locate(m: ExternalModel): Located[] {
  const names = new Set<string>();
  for (const r of m.rows) {
    const l = r.kind === "record" ? r.rec.locator : null;
    if (l?.kind === "external_record_id" || l?.kind === "external_line") names.add(l.file);
  }
  const homes: string[] = [];
  const direct = new Map<string, Located>();
  for (const abs of m.entry.meta.files) {
    for (const n of names) {
      if (!abs.endsWith(`/${n}`) || n.split("/").length > 8) continue;
      const root = abs.slice(0, abs.length - n.length - 1);
      direct.set(abs, { root, rel: n, shown: n });
      homes.push(root);
    }
  }
  // Longest home first: a file no record names is shown relative to its closest home.
  homes.sort((a, b) => b.length - a.length);
  return m.entry.meta.files.map((abs) => {
    const hit = direct.get(abs);
    if (hit) return hit;
    for (const h of homes) {
      const rel = abs.slice(h.length + 1);
      if (abs.startsWith(`${h}/`) && rel.split("/").length <= 8) {
        return { root: h, rel, shown: rel };
      }
    }
    return { root: dirname(abs), rel: basename(abs), shown: basename(abs) };
  });
}

function summarize(s: ActivityStatus): ActivityStatus {
  const bad = s.files.filter((f) => f.state !== "ok");
  if (s.files.length === 0) {
    return { ...s, state: "unavailable", reason: "The index names no source file" };
  }
  if (bad.length === 0) return { ...s, state: "ok" };
  const why = [...new Set(bad.map((f) => f.reason ?? "read_cap"))].join(", ");
  if (bad.every((f) => f.state === "unavailable") && bad.length === s.files.length) {
    return { ...s, state: "unavailable", reason: `No source file could be read (${why})` };
  }
  return {
    ...s,
    state: "partial",
    reason: `${bad.length} of ${s.files.length} source files not read whole (${why})`,
  };
}

/** `m` with its tool calls and context markers placed, and `activity` saying how it went. */
export async function attachActivity(
  m: ExternalModel,
  o: AttachOptions = {},
): Promise<ExternalModel> {
  const spec = SPECS[m.entry.source];
  if (!spec && !DATABASE_SOURCES.has(m.entry.source)) return m;
  if (!spec) {
    // Said, not left silent: a client can tell "no tool calls" from "not read".
    const reason = "This source keeps its tool calls in database rows, which the detail does " +
      "not read yet: its prose is shown without them";
    return { ...m, activity: { state: "unavailable", reason, files: [], skipped: {} } };
  }
  const { cache = ACTIVITY_CACHE, maxBytes = ACTIVITY_MAX_SESSION_BYTES } = o;
  if (!Number.isSafeInteger(maxBytes) || maxBytes < 0) {
    throw new RangeError(`Invalid maxBytes "${maxBytes}": expected a non-negative integer`);
  }
  const status: ActivityStatus = { state: "ok", files: [], skipped: {} };
  if (m.entry.source_gone) {
    if (o.keptCopy) return await fromVault(m, spec, o.keptCopy, maxBytes);
    return {
      ...m,
      activity: { ...status, state: "unavailable", reason: "The session's source files are gone" },
    };
  }
  const joins: JoinFile[] = [];
  let budget = maxBytes;
  for (const f of locate(m).map((l) => withinReadRoot(m.entry.source, l))) {
    if (!isAbsolute(f.root)) {
      status.files.push({ file: f.shown, state: "unavailable", reason: "bad_name" });
      continue;
    }
    const sessionId = m.entry.session_id;
    const read = await readSource(f, {
      parse: (bytes) => spec.parse(bytes, { sessionId }),
      // The parse depends on the session (Claude resume replays): both name the cache entry.
      parserId: `${m.entry.source}:${sessionId}`,
      budget,
      cache,
    });
    budget -= read.used;
    if (!read.ok) {
      status.files.push({ file: f.shown, state: "unavailable", reason: read.reason });
      continue;
    }
    const act = read.activity;
    status.files.push(
      read.truncated
        ? { file: f.shown, state: "truncated", reason: "read_cap" }
        : { file: f.shown, state: "ok" },
    );
    for (const [k, n] of Object.entries(act.skipped)) {
      status.skipped[k] = (status.skipped[k] ?? 0) + n;
    }
    joins.push({
      rel: f.shown,
      activity: act,
      subagent: spec.subagent(f.shown),
      lineOf: (rec) => spec.lineOf(rec, act),
    });
  }
  return { ...m, rows: joinActivity(m.rows, joins), activity: summarize(status) };
}

/**
 * A gone session's tool calls from the vault's copies of its files (the agent deleted
 * them; the vault kept them): the same parse and join as from the agent's files, under
 * the same byte budget, with `activity.from` "vault". A file the vault does not hold (or
 * holds beyond the budget) is said unavailable, as a missing one would be.
 */
async function fromVault(
  m: ExternalModel,
  spec: SourceSpec,
  kept: KeptCopy,
  maxBytes: number,
): Promise<ExternalModel> {
  const status: ActivityStatus = { state: "ok", files: [], skipped: {}, from: "vault" };
  const joins: JoinFile[] = [];
  let budget = maxBytes;
  const located = locate(m);
  const key = `${m.entry.source}:${m.entry.session_id}`;
  for (const [i, abs] of m.entry.meta.files.entries()) {
    const shown = located[i]?.shown ?? basename(abs);
    let bytes: Uint8Array | null;
    try {
      bytes = await kept({ key, path: abs, maxBytes: budget });
    } catch {
      // A damaged object, an unreadable catalog: this file's tools are out, said so.
      bytes = null;
    }
    if (!bytes) {
      status.files.push({ file: shown, state: "unavailable", reason: "not_in_vault" });
      continue;
    }
    budget -= bytes.length;
    const act = spec.parse(bytes, { sessionId: m.entry.session_id });
    status.files.push({ file: shown, state: "ok" });
    for (const [k, n] of Object.entries(act.skipped)) {
      status.skipped[k] = (status.skipped[k] ?? 0) + n;
    }
    joins.push({
      rel: shown,
      activity: act,
      subagent: spec.subagent(shown),
      lineOf: (rec) => spec.lineOf(rec, act),
    });
  }
  const activity = summarize(status);
  return {
    ...m,
    rows: joinActivity(m.rows, joins),
    activity: activity.state === "ok"
      ? { ...activity, reason: "Its agent deleted the files: tool calls from the vault's copy" }
      : activity,
  };
}
