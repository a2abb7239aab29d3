/**
 * SessionLogCore: one session directory and its writers. Owns the event spine
 * (session.jsonl: one validated LogEvent per line, each appended with a single write on
 * an O_APPEND handle so concurrent writers never interleave), turn files, span reads,
 * runtime logs, context snapshot rotation, meta rewrites and the stats that
 * session_summary.json reports. The typed vocabulary methods live in session_log.ts.
 * Invariants: every path is derived from `dir` (the fallback switches every sink); every
 * file is created O_EXCL or opened with a dev+ino check (never through a planted
 * symlink); files 0600, dirs 0700. `dir` is pinned by dev+ino when opened: every write by
 * path first checks it is still that real directory, because a session dir swapped for a
 * symlink moves the containment root with it (realPath checks alone then pass).
 */
import { join } from "node:path";
import { openInsideSync, openRegularFileSync, refusalError, writeAllSync } from "../durable/mod.ts";
import { ContainmentError } from "../errors.ts";
import { ENV_INTENDANT_LOG_DIR } from "../config.ts";
import {
  type EmitFields,
  type EventData,
  type EventName,
  type LogEvent,
  validateEventData,
} from "./events.ts";
import { type SessionMeta, writeMeta } from "./meta.ts";
import { openSessionDir } from "./open_dir.ts";
import { formatTimeOfDay } from "./time.ts";
import {
  DAEMON_LOG,
  FRAMES_DIR,
  parseTurnFileName,
  SESSION_JSONL,
  TRANSCRIPT_JSONL,
  turnFileName,
  TURNS_DIR,
} from "./paths.ts";
import { newStats, type SessionStats, updateStats } from "./stats.ts";

/** Options for opening a session log. */
export interface SessionLogOptions {
  /** `<state-root>/logs`; a fresh session goes to `<logsDir>/<uuid>`. */
  logsDir: string;
  /** `--log-file DIR`: pins the directory outright. */
  pinnedDir?: string | null;
  /** Where a private fallback directory is created. */
  tmpDir: string;
  /** Clock (epoch ms). @default Date.now */
  now?: () => number;
  /** Where one-line notices go (stderr in production). @default no-op */
  logger?: (line: string) => void;
  /** INTENDANT_LOG_MESSAGES_JSON. @default false */
  logMessagesJson?: boolean;
  /** INTENDANT_CONTEXT_SNAPSHOT_KEEP_ALL. @default false */
  contextSnapshotKeepAll?: boolean;
}

const encoder = new TextEncoder();

export class SessionLogCore {
  readonly dir: string;
  readonly sessionId: string;
  readonly fallback: { from: string; reason: string } | null;
  readonly now: () => number;
  readonly logMessagesJson: boolean;
  readonly contextSnapshotKeepAll: boolean;
  readonly startedAtMs: number;
  readonly stats: SessionStats = newStats();
  protected logger: (line: string) => void;
  #jsonl: Deno.FsFile | null;
  #dirId: { dev: number; ino: number };
  #meta: SessionMeta;
  #metaChain: Promise<void> = Promise.resolve();

  protected constructor(
    opened: { dir: string; jsonl: Deno.FsFile; fallback: { from: string; reason: string } | null },
    meta: SessionMeta,
    options: SessionLogOptions,
  ) {
    this.dir = opened.dir;
    const st = Deno.lstatSync(opened.dir);
    this.#dirId = { dev: st.dev, ino: st.ino ?? 0 };
    this.#jsonl = opened.jsonl;
    this.fallback = opened.fallback;
    this.#meta = meta;
    this.sessionId = meta.session_id;
    this.now = options.now ?? Date.now;
    this.logger = options.logger ?? (() => {});
    this.logMessagesJson = options.logMessagesJson ?? false;
    this.contextSnapshotKeepAll = options.contextSnapshotKeepAll ?? false;
    this.startedAtMs = this.now();
  }

  /** Opens the directory (with fallback) for `chosen`. */
  protected static openDir(chosen: string, options: SessionLogOptions) {
    return openSessionDir(chosen, options.tmpDir);
  }

  /** What a command subprocess gets: the session directory, wherever it ended up. */
  subprocessEnv(): Record<string, string> {
    return { [ENV_INTENDANT_LOG_DIR]: this.dir };
  }

  get daemonLogPath(): string {
    return join(this.dir, DAEMON_LOG);
  }

  get framesDir(): string {
    return join(this.dir, FRAMES_DIR);
  }

  get turnsDir(): string {
    return join(this.dir, TURNS_DIR);
  }

  get meta(): SessionMeta {
    return this.#meta;
  }

  get closed(): boolean {
    return this.#jsonl === null;
  }

  /** Validates and appends one event line. Returns the event as written. */
  emit<K extends EventName>(
    name: K,
    data: EventData<K> | undefined,
    fields: EmitFields = {},
  ): LogEvent {
    const ms = this.now();
    const { event, valid } = buildEvent(name, data, fields, ms);
    this.appendLine(event);
    updateStats(this.stats, name, valid, ms);
    return event;
  }

  /** One write() per line: O_APPEND makes it atomic against other appenders on a local fs. */
  protected appendLine(ev: LogEvent): void {
    if (!this.#jsonl) throw new Error(`Session log "${this.dir}" is closed`);
    writeAllSync(this.#jsonl, encoder.encode(JSON.stringify(ev) + "\n"));
  }

  /**
   * Throws ContainmentError unless `dir` is still the real directory that was opened
   * (same dev+ino, not a symlink). Every write by path calls it first.
   */
  protected assertDir(): void {
    let st: Deno.FileInfo;
    try {
      st = Deno.lstatSync(this.dir);
    } catch (err) {
      throw new ContainmentError(`Session directory "${this.dir}" cannot be checked`, {
        cause: err,
      });
    }
    if (
      st.isSymlink || !st.isDirectory || st.dev !== this.#dirId.dev ||
      (st.ino ?? 0) !== this.#dirId.ino
    ) {
      throw new ContainmentError(
        `Refusing session directory "${this.dir}": it was replaced since it was opened`,
      );
    }
  }

  /**
   * Replaces meta fields and rewrites session_meta.json atomically; writes are serialized.
   * Each write stands alone: one that failed does not fail the later ones (nor close()).
   */
  updateMeta(patch: Partial<SessionMeta>): Promise<void> {
    this.#meta = { ...this.#meta, ...patch, session_id: this.#meta.session_id };
    const snapshot = this.#meta;
    const write = this.#metaChain.catch(() => {}).then(() => {
      this.assertDir();
      return writeMeta(this.dir, snapshot);
    });
    this.#metaChain = write;
    return write;
  }

  /** `turns/turn_NNN_suffix` relative to the session dir. */
  turnRel(turn: number, suffix: string): string {
    return `${TURNS_DIR}/${turnFileName(turn, suffix)}`;
  }

  /** Writes (or replaces the content of) a turn file. Returns its relative path. */
  writeTurnFile(turn: number, suffix: string, content: string | Uint8Array): string {
    const name = turnFileName(turn, suffix);
    this.assertDir();
    // Not O_TRUNC at open: a symlink swapped in between the lstat and the open would be
    // followed and its target cut before the dev+ino check refused it (C1 race). The
    // verified handle is truncated instead.
    const f = openRegularFileSync(this.turnsDir, name, { root: this.dir });
    try {
      f.truncateSync(0);
      writeAllSync(f, typeof content === "string" ? encoder.encode(content) : content);
    } finally {
      f.close();
    }
    return `${TURNS_DIR}/${name}`;
  }

  /** Appends to a turn file; returns the span written (offset before, byte count). */
  appendTurnFile(
    turn: number,
    suffix: string,
    content: string | Uint8Array,
  ): { file: string; offset: number; bytes: number } {
    const name = turnFileName(turn, suffix);
    const bytes = typeof content === "string" ? encoder.encode(content) : content;
    this.assertDir();
    const f = openRegularFileSync(this.turnsDir, name, { root: this.dir, append: true });
    try {
      // The end of an O_APPEND file is where this write lands (the span's offset).
      const offset = f.seekSync(0, Deno.SeekMode.End);
      writeAllSync(f, bytes);
      return { file: `${TURNS_DIR}/${name}`, offset, bytes: bytes.length };
    } finally {
      f.close();
    }
  }

  /** Reads `length` bytes at `offset` of a turn file without reading the rest of it. */
  readSpan(rel: string, offset: number, length: number): Uint8Array {
    return readSessionSpan(this.dir, rel, offset, length);
  }

  /** Opens a new file in the session dir (O_EXCL). */
  createFile(name: string): Deno.FsFile {
    this.assertDir();
    return openRegularFileSync(this.dir, name, { root: this.dir, append: true });
  }

  /** Appends a line to transcript.jsonl (the live copy; rebuilt at session end). */
  appendTranscript(
    entry: { ts: string; role: string; text: string; tools_called?: string[] },
  ): void {
    this.assertDir();
    const f = openRegularFileSync(this.dir, TRANSCRIPT_JSONL, { root: this.dir, append: true });
    try {
      writeAllSync(f, encoder.encode(JSON.stringify(entry) + "\n"));
    } finally {
      f.close();
    }
  }

  /** Lists turn files whose suffix matches `predicate`. */
  protected listTurnFiles(predicate: (suffix: string) => boolean): string[] {
    const out: string[] = [];
    for (const e of Deno.readDirSync(this.turnsDir)) {
      const p = e.isFile ? parseTurnFileName(e.name) : null;
      if (p && predicate(p.suffix)) out.push(e.name);
    }
    return out;
  }

  /** Waits for pending meta writes, then closes the spine. Idempotent. */
  async close(): Promise<void> {
    // A failed meta write was reported to its caller; the spine must still be closed.
    await this.#metaChain.catch(() => {});
    if (this.#jsonl) {
      this.#jsonl.close();
      this.#jsonl = null;
    }
  }
}

/**
 * Reads a span of a file named relative to a session dir. The name must be a plain turn
 * file under turns/ (or a plain top-level name); the parent must be real and inside the
 * dir, and the file regular. Reads exactly the span, never the whole file.
 */
export function readSessionSpan(
  dir: string,
  rel: string,
  offset: number,
  length: number,
): Uint8Array {
  if (!Number.isInteger(offset) || offset < 0 || !Number.isInteger(length) || length < 0) {
    throw new RangeError(`Invalid span ${offset}+${length} of "${rel}"`);
  }
  const parts = rel.split("/");
  const ok = (parts.length === 1 && /^[A-Za-z0-9_.-]+$/.test(parts[0]!)) ||
    (parts.length === 2 && parts[0] === TURNS_DIR && parseTurnFileName(parts[1]!) !== null);
  if (!ok || parts.some((p) => p === ".." || p === "." || p === "")) {
    throw new ContainmentError(`Refusing sidecar reference "${rel.slice(0, 120)}"`);
  }
  // The contained reader: the dir and turns/ real directories, then lstat,
  // O_NOFOLLOW|O_NONBLOCK open, dev+ino match, one link. A symlink or FIFO swapped in is
  // refused, never followed (not even under a scoped --allow-read) and never waited on; a
  // hard link is refused because its inode may be any file outside (reliability F1).
  const opened = openInsideSync(dir, rel, { hardlinks: "refuse" });
  if (!opened.ok) throw refusalError(join(dir, rel), opened.reason);
  const file = opened.file;
  try {
    if (offset + length > file.size) {
      throw new RangeError(
        `Span ${offset}+${length} is past the end of "${file.path}" (${file.size} bytes)`,
      );
    }
    return file.read(offset, length);
  } finally {
    file.close();
  }
}

/** Validates `data` and builds a LogEvent whose key order is the spec's. */
export function buildEvent<K extends EventName>(
  name: K,
  data: EventData<K> | undefined,
  fields: EmitFields,
  ms: number,
): { event: LogEvent; valid: unknown } {
  const valid = validateEventData(name, data);
  const ev: Record<string, unknown> = { ts: formatTimeOfDay(ms), ts_ms: ms };
  if (fields.turn !== undefined) ev.turn = fields.turn;
  ev.event = name;
  if (fields.level !== undefined) ev.level = fields.level;
  if (fields.message !== undefined) ev.message = fields.message;
  if (valid !== undefined) ev.data = valid;
  if (fields.file !== undefined) ev.file = fields.file;
  if (fields.file2 !== undefined) ev.file2 = fields.file2;
  return { event: ev as LogEvent, valid };
}

/**
 * Appends one validated event to another process's (or a closed) session's spine, e.g.
 * a rename or a ctl request. Same single-write O_APPEND discipline as the live writer.
 */
export function appendEventToDir<K extends EventName>(
  dir: string,
  name: K,
  data: EventData<K> | undefined,
  fields: EmitFields = {},
  now: () => number = Date.now,
): LogEvent {
  const { event } = buildEvent(name, data, fields, now());
  const f = openRegularFileSync(dir, SESSION_JSONL, { root: dir, append: true });
  try {
    writeAllSync(f, encoder.encode(JSON.stringify(event) + "\n"));
  } finally {
    f.close();
  }
  return event;
}
