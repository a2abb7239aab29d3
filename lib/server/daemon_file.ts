/**
 * daemon.json: how a CLI process finds the daemon serving its state root. The daemon
 * writes it atomically (0600) after it listens and removes it on shutdown; a crash can
 * leave it behind, and a pid or a port can be reused by another program. So the file is
 * only a hint: it is read through the contained reader (a planted symlink, FIFO or huge
 * file at its name is refused, never followed or waited on), validated, and the pid must
 * still be alive where that can be checked — the proof that the daemon is ours is that it
 * answers an authenticated request with this token (daemon_client.ts).
 */
import { basename, dirname } from "node:path";
import { z } from "zod";
import { isPidAlive, readInside } from "../durable/mod.ts";

/** A real daemon.json is ~200 bytes. */
const DAEMON_FILE_MAX_BYTES = 64 * 1024;

const DaemonFileSchema = z.object({
  pid: z.number().int().positive(),
  port: z.number().int().min(1).max(65535),
  url: z.string().max(200),
  token: z.string().min(16).max(512),
  started_at_ms: z.number().optional(),
});

/** What a live daemon advertises. */
export type DaemonFile = z.infer<typeof DaemonFileSchema>;

/**
 * The daemon advertised at `path` when its file is sane and its pid is not known to be
 * dead (isPidAlive answers null where the check is not permitted: then the request decides);
 * null otherwise.
 */
export async function readDaemonFile(path: string): Promise<DaemonFile | null> {
  const r = await readInside(dirname(path), basename(path), {
    maxBytes: DAEMON_FILE_MAX_BYTES,
    hardlinks: "refuse",
  });
  if (!r.ok) return null;
  let parsed: unknown;
  try {
    parsed = JSON.parse(new TextDecoder().decode(r.bytes));
  } catch (err) {
    // A torn or foreign file is not a daemon we can talk to.
    if (err instanceof SyntaxError) return null;
    throw err;
  }
  const d = DaemonFileSchema.safeParse(parsed);
  if (!d.success) return null;
  return isPidAlive(d.data.pid) === false ? null : d.data;
}
