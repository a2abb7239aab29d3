/**
 * SessionLog: the typed vocabulary over SessionLogCore. Every event a session writes
 * goes through one of these methods; nothing else formats session.jsonl lines. The
 * compound writers keep related artifacts consistent in one call: model text goes to
 * turns/*_model.txt once, and the diagnostic model_response and the canonical
 * conversation_message both reference that same byte span (no second copy, no window
 * where one exists without the other).
 */
import { join } from "node:path";
import { writeAllSync, writeFileAtomic } from "../durable/mod.ts";
import { type Provenance, USER_LANE_PROVENANCES } from "./events.ts";
import { readMeta, type SessionMeta, writeMeta } from "./meta.ts";
import { SessionLogCore, type SessionLogOptions } from "./core.ts";
import { formatLocalDateTime } from "./time.ts";
import {
  AGENT_CONFIG,
  contextSnapshotName,
  contextStreamId,
  randomHex32,
  runtimeLogName,
  sanitizeNonce,
  TURNS_DIR,
} from "./paths.ts";
import { extractFunctionNames } from "./json_functions.ts";
import { rebuildTranscript } from "./transcript.ts";
import { writeSessionSummary, writeSummary } from "./summaries.ts";
import { recordFrame } from "./frames.ts";

/** Fields of a fresh session's meta. */
export interface NewSessionMeta {
  projectRoot: string;
  task: string;
  name?: string | null;
  role?: string | null;
  worktree?: SessionMeta["worktree"];
  sessionId?: string;
}

/** Per-command runtime log handles. */
export interface RuntimeLogs {
  nonce: string;
  random: string;
  stdoutName: string;
  stderrName: string;
  stdout: Deno.FsFile;
  stderr: Deno.FsFile;
}

/** A pty result bigger than this also keeps its full text in `{nonce}_{random}_pty.log`. */
export const PTY_FULL_LOG_THRESHOLD_BYTES = 10 * 1024;

export class SessionLog extends SessionLogCore {
  /** Opens a fresh session (in `<logsDir>/<uuid>`, the pinned dir, or a private fallback). */
  static async create(options: SessionLogOptions & { meta: NewSessionMeta }): Promise<SessionLog> {
    const id = options.meta.sessionId ?? crypto.randomUUID();
    const chosen = options.pinnedDir ?? join(options.logsDir, id);
    const opened = SessionLogCore.openDir(chosen, options);
    const now = (options.now ?? Date.now)();
    const meta: SessionMeta = {
      session_id: id,
      created_at: formatLocalDateTime(now),
      created_at_ms: now,
      project_root: options.meta.projectRoot,
      name: options.meta.name ?? null,
      task: options.meta.task,
      status: "running",
      last_turn: 0,
      role: options.meta.role ?? null,
      rounds: 1,
    };
    if (options.meta.worktree) meta.worktree = options.meta.worktree;
    await writeMeta(opened.dir, meta);
    const log = new SessionLog(opened, meta, options);
    log.#announceFallback();
    return log;
  }

  /** Reopens an existing session directory (resume). Its meta must be valid. */
  static async reopen(dir: string, options: SessionLogOptions): Promise<SessionLog> {
    const read = await readMeta(dir);
    if (!read.ok) throw new Error(`Cannot resume "${dir}": session_meta.json is ${read.reason}`);
    const opened = SessionLogCore.openDir(dir, { ...options, tmpDir: options.tmpDir });
    if (opened.fallback) {
      opened.jsonl.close();
      throw new Error(`Cannot resume "${dir}": ${opened.fallback.reason}`);
    }
    return new SessionLog(opened, read.meta, options);
  }

  #announceFallback(): void {
    if (!this.fallback) return;
    const { from, reason } = this.fallback;
    this.logger(
      `intendant: cannot use session directory "${from}" (${reason}); logging to "${this.dir}"`,
    );
    this.emit("log_dir_fallback", { from, to: this.dir, reason }, { level: "warn" });
  }

  // ---- lifecycle -------------------------------------------------------------------

  /**
   * session_agent_config.json: the launch pins and lineage a resume needs (provider,
   * model, autonomy, script, parent). Replaced atomically.
   */
  async writeAgentConfig(config: Record<string, unknown>): Promise<void> {
    this.assertDir();
    await writeFileAtomic(join(this.dir, AGENT_CONFIG), JSON.stringify(config, null, 2) + "\n");
  }

  sessionStarted(
    d: {
      task: string;
      projectRoot: string;
      round: number;
      provider: string;
      model?: string;
      autonomy: string;
      resumed: boolean;
    },
  ) {
    const data = {
      task: d.task,
      project_root: d.projectRoot,
      round: d.round,
      provider: d.provider,
      autonomy: d.autonomy,
      resumed: d.resumed,
      ...(d.model ? { model: d.model } : {}),
    };
    return this.emit("session_started", data, { message: d.task });
  }

  sessionIdentity(
    d: { source: string; backend: string; backendSessionId?: string; wrapper: boolean },
  ) {
    return this.emit("session_identity", {
      session_id: this.sessionId,
      source: d.source,
      backend: d.backend,
      wrapper: d.wrapper,
      ...(d.backendSessionId ? { backend_session_id: d.backendSessionId } : {}),
    });
  }

  sessionRelationship(
    d: {
      parentId: string;
      childId: string;
      relationship: "side" | "subagent" | "fork" | "anchor-fork" | "rewind" | "fission";
    },
  ) {
    return this.emit("session_relationship", {
      parent_id: d.parentId,
      child_id: d.childId,
      relationship: d.relationship,
    });
  }

  async renamed(name: string) {
    const previous = this.meta.name;
    this.emit("session_renamed", { name, previous });
    await this.updateMeta({ name });
  }

  info(message: string, data?: Record<string, unknown>, turn?: number) {
    return this.emit("info", data, { level: "info", message, turn });
  }

  warning(message: string, data?: Record<string, unknown>, turn?: number) {
    return this.emit("warning", data, { level: "warn", message, turn });
  }

  error(message: string, data?: Record<string, unknown>, turn?: number) {
    return this.emit("error", data, { level: "error", message, turn });
  }

  /** Records an unhandled failure; used by the crash hook. */
  crash(err: unknown) {
    const text = err instanceof Error ? `${err.name}: ${err.message}` : String(err);
    return this.emit("crash", { error: text }, { level: "error", message: text });
  }

  // ---- turns and model output ---------------------------------------------------------

  async turnStart(turn: number, provider: string) {
    this.emit("turn_start", { provider }, { turn });
    await this.updateMeta({ last_turn: turn });
  }

  turnEnd(turn: number, d: { commands: number; durationMs: number }) {
    return this.emit("turn_end", { commands: d.commands, duration_ms: d.durationMs }, { turn });
  }

  /** Diagnostic-only model response (wrapper sessions). Appends the text span. */
  modelResponse(turn: number, text: string, d: { hasToolCalls: boolean }) {
    const span = this.appendTurnFile(turn, "model.txt", text);
    this.emit("model_response", {
      model_offset: span.offset,
      model_bytes: span.bytes,
      has_tool_calls: d.hasToolCalls,
    }, { turn, file: span.file });
    return span;
  }

  /**
   * The assistant side of the message lane: one sidecar span, the diagnostic
   * model_response and the canonical conversation_message, all naming the same bytes.
   * No-op for empty text (nothing was said).
   */
  modelResponseWithMessage(turn: number, text: string, d: { seq: number; hasToolCalls: boolean }) {
    if (text.length === 0) return null;
    const span = this.modelResponse(turn, text, d);
    this.emit("conversation_message", {
      message_seq: d.seq,
      role: "assistant",
      provenance: "assistant",
      model_offset: span.offset,
      model_bytes: span.bytes,
    }, { turn, file: span.file });
    this.appendTranscript({ ts: new Date(this.now()).toISOString(), role: "assistant", text });
    return span;
  }

  /** The user side of the lane: raw text of a genuine user entry. */
  conversationMessageUser(
    turn: number | undefined,
    d: { seq: number; provenance: Provenance; text: string; refSeq?: number },
  ) {
    if (!USER_LANE_PROVENANCES.includes(d.provenance)) {
      throw new RangeError(`Provenance "${d.provenance}" never enters the message lane`);
    }
    const data = {
      message_seq: d.seq,
      role: "user" as const,
      provenance: d.provenance as "task",
      text: d.text,
      ...(d.refSeq !== undefined ? { ref_seq: d.refSeq } : {}),
    };
    const ev = this.emit("conversation_message", data, { turn });
    this.appendTranscript({ ts: new Date(this.now()).toISOString(), role: "user", text: d.text });
    return ev;
  }

  conversationRewound(d: { cutAfterSeq: number; kind: string; supersededAtMs?: number }) {
    return this.emit("conversation_rewound", {
      cut_after_seq: d.cutAfterSeq,
      kind: d.kind,
      superseded_at_ms: d.supersededAtMs ?? this.now(),
    });
  }

  conversationMessageEpoch(mapping: [number, string, string][]) {
    return this.emit("conversation_message_epoch", { mapping });
  }

  reasoningContent(turn: number, text: string) {
    if (text.length === 0) return null;
    const span = this.appendTurnFile(turn, "reasoning.txt", text);
    return this.emit("reasoning_content", { bytes: span.bytes }, { turn, file: span.file });
  }

  jsonExtracted(turn: number, value: unknown) {
    const functions = extractFunctionNames(value);
    return this.emit("json_extracted", { functions, count: functions.length }, { turn });
  }

  /**
   * Writes a context snapshot sidecar and rotates the stream to latest-only (unless
   * keep-all): older sidecars of the same (source, session id) stream are deleted; their
   * rows in session.jsonl keep every metadata field.
   */
  contextSnapshot(
    turn: number,
    d: {
      source: string;
      sessionId: string;
      payload: unknown;
      tokens: number;
      itemCount: number;
      labels: string[];
    },
  ) {
    const stream = contextStreamId(d.source, d.sessionId);
    const suffix = `context_${stream}.json`;
    const name = contextSnapshotName(turn, stream);
    const file = this.writeTurnFile(turn, suffix, JSON.stringify(d.payload, null, 2) + "\n");
    if (!this.contextSnapshotKeepAll) {
      for (const old of this.listTurnFiles((s) => s === suffix)) {
        if (old !== name) Deno.removeSync(join(this.turnsDir, old));
      }
    }
    return this.emit("context_snapshot", {
      stream,
      source: d.source,
      session_id: d.sessionId,
      tokens: d.tokens,
      item_count: d.itemCount,
      labels: d.labels,
    }, { turn, file });
  }

  /** Debug dump of the request messages: only when asked, or when it is the only exact input record. */
  turnMessages(
    turn: number,
    messages: unknown,
    d: { providerHasSnapshot: boolean },
  ): string | null {
    if (!this.logMessagesJson && d.providerHasSnapshot) return null;
    return this.writeTurnFile(turn, "messages.json", JSON.stringify(messages, null, 2) + "\n");
  }

  // ---- runtime ----------------------------------------------------------------------

  agentInput(turn: number, commands: { nonce?: string; [k: string]: unknown }[]) {
    const file = this.writeTurnFile(
      turn,
      "agent_in.json",
      JSON.stringify(commands, null, 2) + "\n",
    );
    const functions = extractFunctionNames(commands);
    const summary = commands.map((c) => String(c.exec ?? c.function ?? "?")).join("; ");
    return this.emit("agent_input", {
      commands: commands.length,
      nonces: commands.map((c) => sanitizeNonce(c.nonce)),
      functions,
    }, { turn, file, message: summary });
  }

  /** Writes turn stdout (always) and stderr (only when non-empty). */
  agentOutput(turn: number, d: { stdout: string; stderr: string; exitCodes: number[] }) {
    const file = this.writeTurnFile(turn, "stdout.txt", d.stdout);
    const file2 = d.stderr.length > 0
      ? this.writeTurnFile(turn, "stderr.txt", d.stderr)
      : undefined;
    const enc = new TextEncoder();
    return this.emit("agent_output", {
      stdout_bytes: enc.encode(d.stdout).length,
      stderr_bytes: enc.encode(d.stderr).length,
      exit_codes: d.exitCodes,
    }, { turn, file, file2 });
  }

  /** Creates `{nonce}_{random}_stdout.log` and `_stderr.log` (O_EXCL) for one command. */
  openRuntimeLogs(rawNonce: unknown): RuntimeLogs {
    const nonce = sanitizeNonce(rawNonce);
    const random = randomHex32();
    const stdoutName = runtimeLogName(nonce, random, "stdout");
    const stderrName = runtimeLogName(nonce, random, "stderr");
    const stdout = this.createFile(stdoutName);
    let stderr: Deno.FsFile;
    try {
      stderr = this.createFile(stderrName);
    } catch (err) {
      stdout.close();
      throw err;
    }
    return { nonce, random, stdoutName, stderrName, stdout, stderr };
  }

  /** Keeps the full text of an over-cap pty result; returns its name, or null under the cap. */
  writePtyLog(logs: RuntimeLogs, text: string): string | null {
    const bytes = new TextEncoder().encode(text);
    if (bytes.length <= PTY_FULL_LOG_THRESHOLD_BYTES) return null;
    const name = runtimeLogName(logs.nonce, logs.random, "pty");
    const f = this.createFile(name);
    try {
      writeAllSync(f, bytes);
    } finally {
      f.close();
    }
    return name;
  }

  commandStarted(turn: number, d: { nonce: string; exec: string; pty: boolean }) {
    return this.emit("command_started", d, { turn, message: d.exec });
  }

  commandFinished(
    turn: number,
    d: {
      nonce: string;
      exitCode: number;
      stdoutLog: string;
      stderrLog: string;
      ptyLog?: string | null;
      stdoutBytes: number;
      stderrBytes: number;
      durationMs: number;
    },
  ) {
    return this.emit("command_finished", {
      nonce: d.nonce,
      exit_code: d.exitCode,
      stdout_log: d.stdoutLog,
      stderr_log: d.stderrLog,
      ...(d.ptyLog ? { pty_log: d.ptyLog } : {}),
      stdout_bytes: d.stdoutBytes,
      stderr_bytes: d.stderrBytes,
      duration_ms: d.durationMs,
    }, { turn });
  }

  approval(turn: number, d: { approvalId: string; command: string; kind: string }) {
    return this.emit("approval", { approval_id: d.approvalId, command: d.command, kind: d.kind }, {
      turn,
    });
  }

  approvalResolved(
    turn: number,
    d: { approvalId: string; decision: "approved" | "denied"; by: string },
  ) {
    return this.emit("approval_resolved", {
      approval_id: d.approvalId,
      decision: d.decision,
      by: d.by,
    }, { turn });
  }

  autoApproved(turn: number, d: { approvalId: string; command: string; reason: string }) {
    return this.emit("auto_approved", {
      approval_id: d.approvalId,
      command: d.command,
      reason: d.reason,
    }, { turn });
  }

  // ---- humans ----------------------------------------------------------------------

  humanQuestion(turn: number, questionId: string, question: string) {
    return this.emit("human_question", { question_id: questionId, question }, {
      turn,
      message: question,
    });
  }

  humanResponseSent(turn: number, questionId: string) {
    return this.emit("human_response_sent", { question_id: questionId }, { turn });
  }

  steerRequested(steerId: string, text: string) {
    return this.emit("steer_requested", { steer_id: steerId, text });
  }

  steerDelivered(turn: number, steerId: string, seq: number) {
    return this.emit("steer_delivered", { steer_id: steerId, message_seq: seq }, { turn });
  }

  tokenUsage(turn: number, d: { input: number; output: number }) {
    return this.emit("token_usage", { input_tokens: d.input, output_tokens: d.output }, { turn });
  }

  // ---- computer use, voice, presence, frames ---------------------------------------

  cuTaskStarted(taskId: string, task: string) {
    return this.emit("cu_task_started", { task_id: taskId, task });
  }

  cuAction(taskId: string, action: string) {
    return this.emit("cu_action", { task_id: taskId, action });
  }

  cuTaskCompleted(taskId: string, outcome: string, actions: number) {
    return this.emit("cu_task_completed", { task_id: taskId, outcome, actions });
  }

  voiceSessionStarted(provider: string, model: string) {
    return this.emit("voice_session_started", { provider, model });
  }

  voiceReconnected(attempt: number) {
    return this.emit("voice_reconnected", { attempt });
  }

  /** A whole voice utterance (tokens are buffered upstream into utterances). */
  voiceUtterance(role: "user" | "assistant", text: string) {
    this.appendTranscript({ ts: new Date(this.now()).toISOString(), role, text });
    return this.emit("voice_utterance", { role, text });
  }

  voiceSessionEnded(reason: string) {
    return this.emit("voice_session_ended", { reason });
  }

  presenceUpdate(state: string) {
    return this.emit("presence_update", { state });
  }

  /** Stores a JPEG frame under frames/ and records it in frames.jsonl and the spine. */
  frame(stream: string, jpeg: Uint8Array, sentToLive: boolean) {
    this.assertDir();
    const id = recordFrame(this.dir, this.framesDir, { stream, jpeg, sentToLive, ms: this.now() });
    return this.emit("frame_captured", { frame_id: id, stream, sent_to_live: sentToLive });
  }

  // ---- end ---------------------------------------------------------------------------

  /**
   * Ends the session: session_end event, meta status, transcript rebuilt from
   * session.jsonl, summary.json and session_summary.json, then closes the spine.
   */
  async finish(
    status: "completed" | "failed" | "interrupted",
    d: { reason?: string; outcome?: string } = {},
  ) {
    if (this.closed) return;
    const turns = this.meta.last_turn;
    const durationMs = Math.max(0, this.now() - this.startedAtMs);
    this.emit("session_end", {
      status,
      turns,
      duration_ms: durationMs,
      ...(d.reason ? { reason: d.reason } : {}),
    }, { level: status === "completed" ? "info" : "warn" });
    try {
      await this.updateMeta({ status });
      this.assertDir();
      await rebuildTranscript(this.dir);
      await writeSummary(this.dir, {
        task: this.meta.task,
        outcome: d.outcome ?? status,
        total_turns: turns,
        session_id: this.sessionId,
        session_dir: this.dir,
        ended_at: new Date(this.now()).toISOString(),
        rounds: this.meta.rounds,
      });
      await writeSessionSummary(this.dir, this.stats, { durationMs });
    } finally {
      await this.close();
    }
  }
}

export { TURNS_DIR };
