/**
 * Session control from outside the runner (`intendant ctl`), through files in the
 * session directory, so it works with no daemon and survives a runner crash:
 *  - askHuman: the runner creates `human_question` ({question_id, question}, O_EXCL) and
 *    waits; `ctl answer` writes `human_response` ({question_id, text}) atomically, so the
 *    runner never reads half an answer, and an answer to another question is ignored.
 *  - steer / rollback: `ctl` drops an atomic request file into `ctl/` (and appends
 *    steer_requested to the spine at request time); the runner takes them at the next
 *    turn boundary. A rollback of a session that is not running is applied at once.
 * Every IPC file is read through the contained reader, capped at IPC_FILE_MAX_BYTES: a
 * symlink (to /dev/zero, outside), FIFO, hard link or huge file planted at its name is
 * never followed, waited on or read whole (reliability F1/F5); it counts as unreadable.
 */
import { join } from "node:path";
import { z } from "zod";
import {
  type ContainedRead,
  createNewFileSync,
  ensurePrivateDirSync,
  readInside,
  removeIfExists,
  writeAllSync,
  writeFileAtomic,
} from "../durable/mod.ts";
import { InvalidInputError, NotFoundError } from "../errors.ts";
import { appendEventToDir, HUMAN_QUESTION, HUMAN_RESPONSE, readMeta } from "../session_log/mod.ts";
import { Conversation } from "../conversation/mod.ts";

export const CTL_DIR = "ctl";
/** Longest IPC file read (a question, an answer, a request): far past any real one. */
export const IPC_FILE_MAX_BYTES = 4 * 1024 * 1024;

function readIpc(dir: string, rel: string): Promise<ContainedRead> {
  return readInside(dir, rel, { maxBytes: IPC_FILE_MAX_BYTES, hardlinks: "refuse" });
}

function ipcText(r: ContainedRead & { ok: true }): string {
  return new TextDecoder().decode(r.bytes);
}

const QuestionSchema = z.object({ question_id: z.string(), question: z.string() });
const AnswerSchema = z.object({ question_id: z.string(), text: z.string() });
const SteerSchema = z.object({ kind: z.literal("steer"), steer_id: z.string(), text: z.string() });
const RollbackSchema = z.object({
  kind: z.literal("rollback"),
  to_seq: z.number().int().nonnegative(),
});
const RequestSchema = z.discriminatedUnion("kind", [SteerSchema, RollbackSchema]);
export type ControlRequest = z.infer<typeof RequestSchema>;

async function isRunning(dir: string): Promise<boolean> {
  const m = await readMeta(dir);
  return m.ok && (m.meta.status === "running" || m.meta.status === "waiting");
}

async function writeRequest(dir: string, req: ControlRequest): Promise<void> {
  const ctl = ensurePrivateDirSync(join(dir, CTL_DIR));
  const name = `${Date.now().toString().padStart(15, "0")}-${crypto.randomUUID().slice(0, 8)}.json`;
  await writeFileAtomic(join(ctl, name), JSON.stringify(req) + "\n");
}

// ---- ctl side ------------------------------------------------------------------------

/** Answers the pending askHuman of the session in `dir`. */
export async function answerQuestion(dir: string, text: string): Promise<{ questionId: string }> {
  let q: z.infer<typeof QuestionSchema>;
  const read = await readIpc(dir, HUMAN_QUESTION);
  if (!read.ok && read.reason === "missing") {
    throw new NotFoundError(`Session "${dir}" has no pending question`);
  }
  if (!read.ok) {
    throw new InvalidInputError(`Unreadable human_question in "${dir}": refused (${read.reason})`);
  }
  try {
    q = QuestionSchema.parse(JSON.parse(ipcText(read)));
  } catch (err) {
    throw new InvalidInputError(`Unreadable human_question in "${dir}"`, { cause: err });
  }
  await writeFileAtomic(
    join(dir, HUMAN_RESPONSE),
    JSON.stringify({ question_id: q.question_id, text }) + "\n",
  );
  return { questionId: q.question_id };
}

/** Queues a steer for the next turn boundary and records steer_requested now. */
export async function requestSteer(dir: string, text: string): Promise<{ steerId: string }> {
  if (!(await isRunning(dir))) {
    throw new InvalidInputError(`Session "${dir}" is not running; resume it to steer`);
  }
  const steerId = crypto.randomUUID();
  await writeRequest(dir, { kind: "steer", steer_id: steerId, text });
  appendEventToDir(dir, "steer_requested", { steer_id: steerId, text });
  return { steerId };
}

/** Rolls the conversation back to seq N: queued when running, applied at once otherwise. */
export async function requestRollback(dir: string, toSeq: number): Promise<{ applied: boolean }> {
  if (!Number.isInteger(toSeq) || toSeq < 0) throw new RangeError(`Invalid --to-seq "${toSeq}"`);
  if (await isRunning(dir)) {
    await writeRequest(dir, { kind: "rollback", to_seq: toSeq });
    return { applied: false };
  }
  const { conversation } = await Conversation.load(dir);
  await applyRollback(
    dir,
    conversation,
    toSeq,
    (d) => appendEventToDir(dir, "conversation_rewound", d),
  );
  return { applied: true };
}

/** Cuts the conversation after `toSeq`, rewrites it atomically and records the cut. */
export async function applyRollback(
  dir: string,
  conversation: Conversation,
  toSeq: number,
  emit: (d: { cut_after_seq: number; kind: string; superseded_at_ms: number }) => void,
): Promise<number> {
  if (toSeq >= conversation.nextSeq) {
    throw new RangeError(
      `Cannot roll back to seq ${toSeq}: the conversation ends at seq ${conversation.nextSeq - 1}`,
    );
  }
  const dropped = conversation.truncateAfter(toSeq);
  await conversation.save(dir);
  emit({ cut_after_seq: toSeq, kind: "tail_rollback", superseded_at_ms: Date.now() });
  return dropped;
}

// ---- runner side ---------------------------------------------------------------------

/** Takes (reads and deletes) queued requests, oldest first; bad files are reported. */
export async function takeRequests(
  dir: string,
): Promise<{ requests: ControlRequest[]; bad: string[] }> {
  const ctl = join(dir, CTL_DIR);
  const names: string[] = [];
  try {
    for await (const e of Deno.readDir(ctl)) {
      if (e.isFile && e.name.endsWith(".json") && !e.name.startsWith(".")) names.push(e.name);
    }
  } catch (err) {
    if (err instanceof Deno.errors.NotFound) return { requests: [], bad: [] };
    throw err;
  }
  names.sort();
  const requests: ControlRequest[] = [];
  const bad: string[] = [];
  for (const name of names) {
    const p = join(ctl, name);
    const read = await readIpc(dir, `${CTL_DIR}/${name}`);
    const r = RequestSchema.safeParse(read.ok ? safeJson(ipcText(read)) : null);
    if (r.success) requests.push(r.data);
    else bad.push(name);
    await Deno.remove(p);
  }
  return { requests, bad };
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    // Reported by the caller as a bad request file.
    return null;
  }
}

/** Removes IPC files a previous (crashed) run left behind. Symlinks are unlinked, never followed. */
export async function clearStaleQuestion(dir: string): Promise<void> {
  for (const name of [HUMAN_QUESTION, HUMAN_RESPONSE]) await removeIfExists(join(dir, name));
}

/** Creates `human_question` (O_EXCL: a planted file or symlink makes this fail loudly). */
export function writeQuestion(dir: string, questionId: string, question: string): void {
  const f = createNewFileSync(dir, HUMAN_QUESTION, { root: dir });
  try {
    writeAllSync(
      f,
      new TextEncoder().encode(JSON.stringify({ question_id: questionId, question }) + "\n"),
    );
  } finally {
    f.close();
  }
}

/**
 * Waits for the answer to `questionId`; answers to other questions are discarded.
 * Returns null when aborted. Removes both IPC files once answered.
 */
export async function waitForAnswer(
  dir: string,
  questionId: string,
  o: { signal: AbortSignal; pollMs?: number },
): Promise<string | null> {
  const path = join(dir, HUMAN_RESPONSE);
  while (!o.signal.aborted) {
    let text: string | null = null;
    const read = await readIpc(dir, HUMAN_RESPONSE);
    if (read.ok) text = ipcText(read);
    // Anything else planted at the name (symlink, FIFO, hard link, huge) is unlinked unread.
    // ("parent": the session dir itself is no longer real; nothing there is ours to unlink.)
    else if (read.reason !== "missing" && read.reason !== "parent") await removeIfExists(path);
    if (text !== null) {
      const r = AnswerSchema.safeParse(safeJson(text));
      await removeIfExists(path);
      if (r.success && r.data.question_id === questionId) {
        await clearStaleQuestion(dir);
        return r.data.text;
      }
    }
    await new Promise((res) => setTimeout(res, o.pollMs ?? 100));
  }
  return null;
}
