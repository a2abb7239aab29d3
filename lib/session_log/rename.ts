/**
 * Renaming a native session from outside its writer (CLI, dashboard): the name goes into
 * session_meta.json (atomic rewrite) and a session_renamed event is appended to the spine
 * so replay shows when it happened. Names are normalized like every other name.
 */
import { appendEventToDir } from "./core.ts";
import { findSession } from "./discovery.ts";
import { writeMeta } from "./meta.ts";
import { normalizeName } from "./names.ts";

/** Renames the session `idOrPrefix` under `logsDir`; returns its id and the stored name. */
export async function renameNativeSession(
  logsDir: string,
  idOrPrefix: string,
  name: string | null,
  options: { now?: () => number } = {},
): Promise<{ sessionId: string; name: string | null }> {
  const found = await findSession(logsDir, idOrPrefix);
  const normalized = normalizeName(name);
  const previous = found.meta.name;
  await writeMeta(found.dir, { ...found.meta, name: normalized });
  appendEventToDir(
    found.dir,
    "session_renamed",
    { name: normalized ?? "", previous },
    {},
    options.now,
  );
  return { sessionId: found.meta.session_id, name: normalized };
}
