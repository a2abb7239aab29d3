/**
 * What a delete confirmation and the trash listing show about a session directory: its
 * meta facts (through the contained meta read; an unreadable meta leaves them null), its
 * message count (the index's shard when it has one, else a scan of the spine: the same
 * numbers the catalog shows) and its size on disk. The size walk never follows a
 * symlink and counts allocated blocks, as du(1) does, falling back to the apparent size
 * where the platform reports no blocks. Strings here are untrusted (they came from a
 * meta file): the CLI passes them through terminalSafe before printing.
 */
import { join } from "node:path";
import { sessionKey, type Store } from "../message_search/mod.ts";
import { normalizeName } from "../session_log/mod.ts";
import { titleOf } from "./list_sessions.ts";
import { readMetaInside, scanSpine } from "./native_facts.ts";

/** Display facts of one native session directory. */
export interface SessionFacts {
  session_id: string;
  name: string | null;
  /** The task, one line, cut (as the catalog shows it). */
  title: string | null;
  project: string | null;
  status: string | null;
  created_ms: number | null;
  size_bytes: number;
}

/** Meta facts and size of the session in `dir`. */
export async function sessionFacts(dir: string, sessionId: string): Promise<SessionFacts> {
  const [meta, size] = await Promise.all([readMetaInside(dir), diskUsage(dir)]);
  return {
    session_id: sessionId,
    name: normalizeName(meta?.name ?? null),
    title: titleOf(meta?.task),
    project: meta?.project_root ?? null,
    status: meta?.status ?? null,
    created_ms: meta?.created_at_ms ?? null,
    size_bytes: size,
  };
}

/** Message rows of a native session: its shard's record count, else a spine scan. */
export async function messageCount(store: Store, sessionId: string, dir: string): Promise<number> {
  const entry = (await store.readManifest()).sessions[sessionKey("intendant", sessionId)];
  return entry ? entry.records : (await scanSpine(dir, sessionId)).messages;
}

function usage(st: Deno.FileInfo): number {
  return st.blocks !== null && st.blocks !== undefined ? st.blocks * 512 : st.size;
}

/** Bytes `dir` occupies, itself included; entries vanishing mid-walk are skipped. */
export async function diskUsage(dir: string): Promise<number> {
  let total = 0;
  const stack = [dir];
  while (stack.length > 0) {
    const d = stack.pop()!;
    let st: Deno.FileInfo;
    try {
      st = await Deno.lstat(d);
    } catch (err) {
      if (err instanceof Deno.errors.NotFound) continue;
      throw err;
    }
    total += usage(st);
    if (!st.isDirectory) continue;
    try {
      for await (const e of Deno.readDir(d)) {
        const p = join(d, e.name);
        if (e.isDirectory && !e.isSymlink) stack.push(p);
        else {
          const s = await Deno.lstat(p).catch((err) => {
            if (err instanceof Deno.errors.NotFound) return null;
            throw err;
          });
          if (s) total += usage(s);
        }
      }
    } catch (err) {
      if (!(err instanceof Deno.errors.NotFound)) throw err;
    }
  }
  return total;
}
