/**
 * Zod schemas for every route parameter. Query strings arrive as strings: booleans,
 * numbers, lists and times are parsed here, once, with bounds, so handlers only ever see
 * valid typed values and anything else is a 400 naming the parameter.
 */
import { z } from "zod";
import { SEARCH_SORTS, type SearchRequest, SOURCES } from "../message_search/mod.ts";

const bool = z.enum(["true", "false", "1", "0", "yes", "no", "on", "off"]).transform((v) =>
  ["true", "1", "yes", "on"].includes(v)
);
const csv = <T extends string>(values: readonly [T, ...T[]]) =>
  z.string().max(200).transform((s) => s.split(",").map((x) => x.trim()).filter(Boolean)).pipe(
    z.array(z.enum(values)),
  );
const int = (min: number, max: number) => {
  const words = `must be a whole number from ${min} to ${max}`;
  return z.string().regex(/^\d{1,9}$/, words).transform(Number)
    .pipe(z.number().int(words).min(min, words).max(max, words));
};
/** Epoch ms, or an ISO date/time. */
const time = z.string().max(40).transform((s, ctx) => {
  const n = /^\d{1,15}$/.test(s) ? Number(s) : Date.parse(s);
  if (!Number.isFinite(n)) {
    ctx.addIssue({
      code: "custom",
      message: "must be a date: epoch milliseconds or ISO 8601 (2026-05-01, 2026-05-01T12:00Z)",
    });
    return z.NEVER;
  }
  return n;
});

export const MessageSearchParams = z.object({
  q: z.string().min(1).max(1000),
  limit: int(1, 100).optional(),
  cursor: z.string().max(4096).optional(),
  include_superseded: bool.optional(),
  source: csv(SOURCES).optional(),
  role: csv(["user", "assistant"] as const).optional(),
  project: z.string().max(500).optional(),
  since: time.optional(),
  until: time.optional(),
  complete: bool.optional(),
  /** newest (the default) or relevance (issue 27). */
  sort: z.enum(SEARCH_SORTS).optional(),
}).strict();

/** The engine request of parsed message-search parameters (both scopes' routes). */
export function searchRequestOf(p: z.infer<typeof MessageSearchParams>): SearchRequest {
  return {
    q: p.q,
    limit: p.limit,
    cursor: p.cursor ?? null,
    include_superseded: p.include_superseded ?? false,
    source: p.source,
    role: p.role,
    project: p.project,
    since: p.since,
    until: p.until,
    complete: p.complete,
    sort: p.sort,
  };
}

export const SessionListParams = z.object({
  limit: int(1, 500).optional(),
  offset: int(0, 10_000_000).optional(),
  source: csv(SOURCES).optional(),
  q: z.string().max(500).optional(),
}).strict();

export const DetailParams = z.object({
  offset: int(0, 100_000_000).optional(),
  limit: int(1, 1000).optional(),
  locate: z.string().max(1_048_576).optional(),
  /** The query whose hits the answer lists (same limit as message search's q). */
  q: z.string().max(1000).optional(),
}).strict();

export const ReplayParams = z.object({
  offset: int(0, 100_000_000).optional(),
  limit: int(1, 5000).optional(),
}).strict();

export const StreamParams = z.object({ from_line: int(0, 1_000_000_000).optional() }).strict();

export const DeepSearchParams = z.object({
  q: z.string().min(2).max(1000),
  cursor: z.string().max(4096).optional(),
  limit: int(1, 500).optional(),
  /** A page's time budget (the dashboard pages about once a second to show progress). */
  max_ms: int(100, 10_000).optional(),
  /** `GET /api/sessions/message-search?scope=deep` is this route. */
  scope: z.literal("deep").optional(),
}).strict();

export const RenameBody = z.object({ name: z.string().max(10_000).nullable() }).strict();

/** Longest answer or steer text accepted (a pasted log excerpt fits; a runaway paste does not). */
export const CONTROL_TEXT_MAX_CHARS = 100_000;
const controlText = z.string().max(CONTROL_TEXT_MAX_CHARS).refine((t) => t.trim().length > 0, {
  message: "must not be empty",
});

/** POST /api/session/{id}/answer; `question_id` (optional) guards against answering a newer question. */
export const AnswerBody = z.object({
  text: controlText,
  question_id: z.string().min(1).max(200).optional(),
}).strict();

export const SteerBody = z.object({ text: controlText }).strict();

export const RollbackBody = z.object({ to_seq: z.number().int().min(0).max(1_000_000_000) })
  .strict();

/** Parses URLSearchParams against a schema (single-valued params). */
export function parseQuery<T extends z.ZodType>(schema: T, url: URL): z.infer<T> {
  const obj: Record<string, string> = {};
  for (const [k, v] of url.searchParams) obj[k] = v;
  return schema.parse(obj);
}
