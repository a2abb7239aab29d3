/**
 * session_meta.json: exactly the spec's fields, validated on read and write, and always
 * replaced atomically (temp + fsync + rename + dir fsync), so a crash mid-rewrite leaves
 * either the old or the new file, never a torn one. This file drives --continue (most
 * recent top-level session of a project; sub-agent roles skipped) and --resume.
 */
import { join } from "node:path";
import { z } from "zod";
import { readInside, writeFileAtomic } from "../durable/mod.ts";
import { SESSION_STATUSES } from "./events.ts";
import { SESSION_META } from "./paths.ts";

/** A real session_meta.json is a few hundred bytes; anything past this is not one. */
const META_MAX_BYTES = 1024 * 1024;

export const WorktreeSchema = z.object({
  branch: z.string(),
  path: z.string(),
  base_root: z.string(),
  base_branch: z.string().nullable(),
  base_commit: z.string().nullable(),
});

export const SessionMetaSchema = z.object({
  session_id: z.string().min(1),
  created_at: z.string(),
  created_at_ms: z.number().int(),
  project_root: z.string(),
  name: z.string().nullable(),
  task: z.string(),
  status: z.enum(SESSION_STATUSES),
  last_turn: z.number().int().nonnegative(),
  /** Sub-agent role (orchestrator, research, implementation, testing); null for top-level. */
  role: z.string().nullable(),
  rounds: z.number().int().nonnegative(),
  worktree: WorktreeSchema.optional(),
});
export type SessionMeta = z.infer<typeof SessionMetaSchema>;

/** Result of reading a meta file: the meta, or why it could not be used. */
export type MetaRead = { ok: true; meta: SessionMeta } | { ok: false; reason: string };

/**
 * Reads and validates `<dir>/session_meta.json`. Never throws for a bad file; a symlink,
 * FIFO or hard link planted at the name is refused unread (it would name a file outside
 * the session, or block the sweep that reads it): `reason` is then the contained
 * reader's refusal ("missing", "symlink", "hardlinked", "too_large", …).
 */
export async function readMeta(dir: string): Promise<MetaRead> {
  let r;
  try {
    r = await readInside(dir, SESSION_META, { maxBytes: META_MAX_BYTES });
  } catch (err) {
    // EACCES, EIO: the meta is unusable, the caller goes on without it.
    return { ok: false, reason: String(err) };
  }
  if (!r.ok) return { ok: false, reason: r.reason };
  return parseMeta(new TextDecoder().decode(r.bytes));
}

/** Validates meta JSON text. */
export function parseMeta(text: string): MetaRead {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (err) {
    return { ok: false, reason: `not JSON: ${(err as Error).message}` };
  }
  const r = SessionMetaSchema.safeParse(raw);
  if (!r.success) {
    const i = r.error.issues[0];
    return { ok: false, reason: `invalid field "${i?.path.join(".")}": ${i?.message}` };
  }
  return { ok: true, meta: r.data };
}

/** Validates and atomically writes `<dir>/session_meta.json` (pretty, 0600). */
export async function writeMeta(dir: string, meta: SessionMeta): Promise<void> {
  const valid = SessionMetaSchema.parse(meta);
  // Field order is the spec's; worktree only when present.
  const ordered: Record<string, unknown> = {
    session_id: valid.session_id,
    created_at: valid.created_at,
    created_at_ms: valid.created_at_ms,
    project_root: valid.project_root,
    name: valid.name,
    task: valid.task,
    status: valid.status,
    last_turn: valid.last_turn,
    role: valid.role,
    rounds: valid.rounds,
  };
  if (valid.worktree) ordered.worktree = valid.worktree;
  await writeFileAtomic(join(dir, SESSION_META), JSON.stringify(ordered, null, 2) + "\n");
}
