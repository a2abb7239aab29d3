/**
 * The trash's routes: DELETE /api/session/{id} moves a native session to the trash
 * (tombstone first; the dashboard confirms, the server does not ask), POST
 * /api/session/{id}/restore brings it back (the dashboard's Undo) and GET /api/trash
 * lists the trash. The same id policy as the CLI: a full id, or a unique prefix of at
 * least 8 characters (a shorter one is a 400 naming its matches). `{id}` may be the bare
 * id or `intendant:<id>`; external sessions belong to their own tools and are refused.
 * Token and Origin are enforced by the app's middleware (non-GET routes).
 */
import type { Context } from "hono";
import {
  deleteNativeSession,
  listTrash,
  parseSessionKey,
  resolveNativeForDelete,
  restoreNativeSession,
  type TrashDeps,
} from "../catalog/mod.ts";
import { InvalidInputError } from "../errors.ts";

/** The native id in `raw` (grammar-checked before any file is touched). */
function nativeId(raw: string, verb: string): string {
  const { source, id } = parseSessionKey(raw);
  if (source !== null && source !== "intendant") {
    throw new InvalidInputError(
      `"${source}:${id}" belongs to its own tool; only native sessions can be ${verb} here`,
    );
  }
  return id;
}

/** DELETE /api/session/{id}: answers what it trashed and where to undo it. */
export async function deleteRoute(c: Context, d: TrashDeps, raw: string): Promise<Response> {
  const target = await resolveNativeForDelete(d.logsDir, nativeId(raw, "deleted"));
  const t = await deleteNativeSession(d, target.sessionId, target.dir);
  return c.json({ deleted: t.key, ...t, restore: `/api/session/${t.session_id}/restore` });
}

/** POST /api/session/{id}/restore */
export async function restoreRoute(c: Context, d: TrashDeps, raw: string): Promise<Response> {
  const r = await restoreNativeSession(d, nativeId(raw, "restored"));
  return c.json({ restored: r.key, ...r });
}

/** GET /api/trash */
export async function trashListRoute(c: Context, d: TrashDeps): Promise<Response> {
  return c.json({ entries: await listTrash(d) });
}
