/**
 * Session control over HTTP: answer a pending askHuman, steer, roll back — the dashboard's
 * side of `intendant ctl`, calling the very same functions (answerQuestion, requestSteer,
 * requestRollback), so both paths write the same files and the runner cannot tell them
 * apart. Token and Origin are enforced by the app's /api middleware (these are POSTs);
 * bodies arrive validated (params.ts).
 *
 * Native sessions only (an external session belongs to its own tool): 400, as for the
 * other native-only routes. State conflicts answer without touching anything: no pending
 * question → 404; a question other than the one the client saw (`question_id`) → 409
 * question_changed with the current one; an answer already written and not yet taken by
 * the runner → 409 already_answered (a second tab must not silently replace the first
 * answer; `ctl answer` still can); steering an ended session → 409 not_running. A
 * rollback of an ended session is applied at once, as `ctl rollback` does. The runner's
 * own error messages name the session directory; they are re-worded with the session key
 * so no absolute path reaches the client.
 */
import { join } from "node:path";
import type { Context } from "hono";
import {
  type CatalogDeps,
  isLiveStatus,
  readPendingQuestion,
  readSessionStatus,
  resolveSessionKey,
} from "../catalog/mod.ts";
import { InvalidInputError, NotFoundError } from "../errors.ts";
import { HUMAN_RESPONSE } from "../session_log/mod.ts";
import { answerQuestion, requestRollback, requestSteer } from "../runner/mod.ts";

interface Target {
  key: string;
  dir: string;
}

async function nativeTarget(catalog: CatalogDeps, id: string): Promise<Target> {
  const s = await resolveSessionKey(catalog, id);
  if (s.source !== "intendant" || !s.dir) {
    throw new InvalidInputError(
      `"${s.key}" belongs to its own tool; only native sessions can be controlled here`,
    );
  }
  return { key: s.key, dir: s.dir };
}

/** lstat only: a planted symlink counts as present and is never followed. */
async function present(path: string): Promise<boolean> {
  try {
    await Deno.lstat(path);
    return true;
  } catch (err) {
    if (err instanceof Deno.errors.NotFound) return false;
    throw err;
  }
}

function notRunning(c: Context, key: string, what: string): Response {
  return c.json({
    error: "not_running",
    message: `Session "${key}" is not running; resume it to ${what}`,
  }, 409);
}

/** POST /api/session/{id}/answer. */
export async function answerRoute(
  c: Context,
  catalog: CatalogDeps,
  id: string,
  body: { text: string; question_id?: string },
): Promise<Response> {
  const t = await nativeTarget(catalog, id);
  const pending = await readPendingQuestion(t.dir);
  if (!pending) throw new NotFoundError(`Session "${t.key}" has no pending question`);
  if (body.question_id !== undefined && body.question_id !== pending.question_id) {
    return c.json({
      error: "question_changed",
      message: `Session "${t.key}" now asks another question; read it before answering`,
      pending_question: pending,
    }, 409);
  }
  if (await present(join(t.dir, HUMAN_RESPONSE))) {
    return c.json({
      error: "already_answered",
      message: `Session "${t.key}" already has an answer on its way to the agent`,
    }, 409);
  }
  try {
    const r = await answerQuestion(t.dir, body.text);
    return c.json({ key: t.key, question_id: r.questionId });
  } catch (err) {
    // Answered (and the file removed) between our read and answerQuestion's own read.
    if (err instanceof NotFoundError) {
      throw new NotFoundError(`Session "${t.key}" has no pending question`, { cause: err });
    }
    if (err instanceof InvalidInputError) {
      throw new InvalidInputError(`Session "${t.key}" has an unreadable question file`, {
        cause: err,
      });
    }
    throw err;
  }
}

/** POST /api/session/{id}/steer. */
export async function steerRoute(
  c: Context,
  catalog: CatalogDeps,
  id: string,
  body: { text: string },
): Promise<Response> {
  const t = await nativeTarget(catalog, id);
  if (!isLiveStatus(await readSessionStatus(t.dir))) return notRunning(c, t.key, "steer");
  try {
    const r = await requestSteer(t.dir, body.text);
    return c.json({ key: t.key, steer_id: r.steerId, queued: true });
  } catch (err) {
    // The session ended between our status read and requestSteer's.
    if (err instanceof InvalidInputError) return notRunning(c, t.key, "steer");
    throw err;
  }
}

/** POST /api/session/{id}/rollback. */
export async function rollbackRoute(
  c: Context,
  catalog: CatalogDeps,
  id: string,
  body: { to_seq: number },
): Promise<Response> {
  const t = await nativeTarget(catalog, id);
  const r = await requestRollback(t.dir, body.to_seq);
  return c.json({ key: t.key, to_seq: body.to_seq, applied: r.applied });
}
