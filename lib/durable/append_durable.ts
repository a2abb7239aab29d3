/**
 * appendDurable: the crash-safe way to add bytes to the end of an existing file (the
 * store's manifest journal). Protocol: open O_APPEND (never create — a new file's entry
 * needs a directory fsync, so files are created through writeFileAtomic), write, fsync,
 * close. A reader of such a file must treat an unterminated or garbled tail as "not
 * written": power loss may leave the unsynced tail dropped, torn or zero-filled.
 * Invariant: when this resolves, the bytes are durable; when it rejects, the caller must
 * not acknowledge them (a failed fsync is final: see Fs.sync in fs.ts).
 */
import { type Fs, realFs } from "./fs.ts";

/** Options for {@link appendDurable}. */
export interface AppendDurableOptions {
  /** File system to write through. @default realFs */
  fs?: Fs;
}

/** Appends `bytes` to the existing file at `path` and fsyncs it. */
export async function appendDurable(
  path: string,
  bytes: Uint8Array | string,
  options: AppendDurableOptions = {},
): Promise<void> {
  const { fs = realFs } = options;
  const data = typeof bytes === "string" ? new TextEncoder().encode(bytes) : bytes;
  const handle = await fs.openAppend(path);
  let closed = false;
  try {
    await handle.writeAll(data);
    await handle.sync();
    closed = true;
    handle.close();
  } finally {
    if (!closed) {
      try {
        handle.close();
      } catch { /* the fd is released either way; the original error is what matters */ }
    }
  }
}
