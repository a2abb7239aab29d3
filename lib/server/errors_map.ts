/**
 * The one error reporter of the HTTP edge: maps domain errors to status + JSON. It never
 * echoes the request URL or query (q is never logged, nor reflected into logs), and a 5xx
 * logs the error message only.
 */
import { ZodError } from "zod";
import {
  AmbiguousPrefixError,
  ContainmentError,
  InvalidInputError,
  NotFoundError,
} from "../errors.ts";
import { CursorExpiredError, InvalidCursorError } from "../message_search/mod.ts";
import { DamagedSessionError, MalformedLocatorError } from "../catalog/mod.ts";
import { TeamDbError } from "../team/mod.ts";
import { issueInWords } from "./zod_words.ts";

/** Status and body for an error. */
export function mapError(err: unknown): { status: number; body: Record<string, unknown> } {
  if (err instanceof ZodError) {
    const i = err.issues[0];
    const what = i?.path.length ? `parameter "${i.path.join(".")}"` : "request";
    return {
      status: 400,
      body: {
        error: "bad_request",
        message: `Invalid ${what}: ${i ? issueInWords(i) : "invalid"}`,
      },
    };
  }
  if (err instanceof CursorExpiredError) {
    return { status: 410, body: { error: "cursor_expired", message: err.message } };
  }
  if (err instanceof InvalidCursorError) {
    return { status: 400, body: { error: "bad_cursor", message: err.message } };
  }
  if (err instanceof MalformedLocatorError) {
    return { status: 400, body: { error: "bad_locate", message: err.message } };
  }
  if (err instanceof InvalidInputError || err instanceof RangeError || err instanceof SyntaxError) {
    return { status: 400, body: { error: "bad_request", message: (err as Error).message } };
  }
  // A damaged index shard (F8): 503 while the sweep the reader triggered rebuilds it, 410
  // when its sources are gone and it never will be. Never the generic 500.
  if (err instanceof DamagedSessionError) {
    return err.reason === "source_gone"
      ? { status: 410, body: { error: "index_lost", message: err.message } }
      : { status: 503, body: { error: "index_rebuilding", message: err.message } };
  }
  // The team database is down or unusable (team_routes.ts wraps the client's connection
  // errors into TeamDbError): a clear 503, the message never carries the password.
  if (err instanceof TeamDbError) {
    return {
      status: 503,
      body: { error: "team_unavailable", kind: err.kind, message: err.message },
    };
  }
  if (err instanceof NotFoundError) {
    return { status: 404, body: { error: "not_found", message: err.message } };
  }
  if (err instanceof AmbiguousPrefixError) {
    return {
      status: 409,
      body: { error: "ambiguous", message: err.message, candidates: err.candidates },
    };
  }
  if (err instanceof ContainmentError) {
    return {
      status: 403,
      body: { error: "forbidden", message: "Refused: outside the session directory" },
    };
  }
  // A restore whose target directory exists already (trash_restore.ts): nothing moved.
  if (err instanceof Deno.errors.AlreadyExists) {
    return { status: 409, body: { error: "conflict", message: err.message } };
  }
  return { status: 500, body: { error: "internal", message: "Internal error" } };
}
