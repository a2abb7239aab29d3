/**
 * Starting and resuming the session a headless run works in. A fresh session writes its
 * task as the first message (provenance task) and, with a parent, its place in the
 * session graph (session_identity + session_relationship in the child, and the same
 * relationship appended to the parent's log). A resume reopens the directory, renumbers a
 * legacy conversation (recording the epoch marker), appends the new task as a
 * "[Session resumed] Continue with: …" message (the lane row carries the raw task),
 * continues the turn count and bumps rounds.
 */
import { Conversation } from "../conversation/mod.ts";
import {
  appendEventToDir,
  type FoundSession,
  readSessionEvents,
  SessionLog,
  type SessionLogOptions,
} from "../session_log/mod.ts";
import { clearStaleQuestion } from "./control.ts";
import type { Provider } from "./provider.ts";

export type Relationship = "side" | "subagent" | "fork";

/** What a run starts from. */
export interface StartOptions {
  logOptions: SessionLogOptions;
  provider: Provider;
  task: string;
  projectRoot: string;
  name?: string | null;
  parent?: { session: FoundSession; relationship: Relationship } | null;
  /** Extra launch pins recorded in session_agent_config.json. */
  pins?: Record<string, unknown>;
  contextWindow?: number | null;
}

/** A session ready for its round. */
export interface StartedSession {
  log: SessionLog;
  conversation: Conversation;
  round: number;
}

/** Creates a fresh session and records its task. */
export async function startSession(o: StartOptions): Promise<StartedSession> {
  const log = await SessionLog.create({
    ...o.logOptions,
    meta: {
      projectRoot: o.projectRoot,
      task: o.task,
      name: o.name ?? null,
      role: o.parent?.relationship === "subagent" ? "subagent" : null,
    },
  });
  await log.writeAgentConfig({
    provider: o.provider.name,
    model: o.provider.model,
    autonomy: "headless",
    parent_id: o.parent?.session.meta.session_id ?? null,
    relationship: o.parent?.relationship ?? null,
    ...o.pins,
  });
  if (o.parent) {
    const rel = {
      parentId: o.parent.session.meta.session_id,
      childId: log.sessionId,
      relationship: o.parent.relationship,
    };
    log.sessionIdentity({ source: "intendant", backend: "intendant", wrapper: false });
    log.sessionRelationship(rel);
    appendEventToDir(o.parent.session.dir, "session_relationship", {
      parent_id: rel.parentId,
      child_id: rel.childId,
      relationship: rel.relationship,
    });
  }
  log.sessionStarted({
    task: o.task,
    projectRoot: o.projectRoot,
    round: 1,
    provider: o.provider.name,
    model: o.provider.model,
    autonomy: "headless",
    resumed: false,
  });
  const conversation = new Conversation({ contextWindow: o.contextWindow });
  const msg = conversation.append({ role: "user", content: o.task, provenance: "task" }, log.dir);
  log.conversationMessageUser(undefined, { seq: msg.seq, provenance: "task", text: o.task });
  return { log, conversation, round: 1 };
}

/** Reopens `found` for another round with `task`. */
export async function resumeSession(
  found: FoundSession,
  o: Omit<StartOptions, "parent" | "name" | "projectRoot"> & { name?: string | null },
): Promise<StartedSession> {
  const log = await SessionLog.reopen(found.dir, o.logOptions);
  await clearStaleQuestion(log.dir);
  const { conversation, report } = await Conversation.load(log.dir, {
    contextWindow: o.contextWindow,
  });
  if (report.malformedLines.length > 0) {
    log.warning(
      `conversation.jsonl has ${report.malformedLines.length} unreadable line(s); they were skipped`,
      { lines: report.malformedLines.slice(0, 20) },
    );
  }
  const mapping = conversation.ensureSeqsAssigned();
  // The lane is the authority on seqs already handed out: if conversation.jsonl lost its
  // tail (or is missing), never reuse a seq the log references.
  conversation.reserveThrough(await highestLoggedSeq(log.dir));
  if (mapping) {
    await conversation.save(log.dir);
    log.conversationMessageEpoch(mapping);
  }
  const round = log.meta.rounds + 1;
  await log.updateMeta({
    task: o.task,
    rounds: round,
    status: "running",
    ...(o.name ? { name: o.name } : {}),
  });
  log.sessionStarted({
    task: o.task,
    projectRoot: log.meta.project_root,
    round,
    provider: o.provider.name,
    model: o.provider.model,
    autonomy: "headless",
    resumed: true,
  });
  const msg = conversation.append({
    role: "user",
    content: `[Session resumed] Continue with: ${o.task}`,
    provenance: "resume_task",
  }, log.dir);
  log.conversationMessageUser(undefined, { seq: msg.seq, provenance: "resume_task", text: o.task });
  return { log, conversation, round };
}

/** The highest message_seq any conversation_message row in the spine references. */
async function highestLoggedSeq(dir: string): Promise<number> {
  const { events } = await readSessionEvents(dir);
  let max = 0;
  for (const { event } of events) {
    if (event.event !== "conversation_message") continue;
    const seq = (event.data as { message_seq?: unknown } | undefined)?.message_seq;
    if (typeof seq === "number" && seq > max) max = seq;
  }
  return max;
}
