/**
 * frames/: display and camera captures. Each JPEG is created O_EXCL under a real
 * frames/ directory inside the session dir, and frames.jsonl gets one manifest line
 * ({id, stream, timestamp, sent_to_live}) per frame.
 */
import {
  createNewFileSync,
  ensurePrivateDirSync,
  openRegularFileSync,
  writeAllSync,
} from "../durable/mod.ts";
import { FRAMES_MANIFEST } from "./paths.ts";

/** Stores one frame; returns its id. */
export function recordFrame(
  sessionDir: string,
  framesDir: string,
  d: { stream: string; jpeg: Uint8Array; sentToLive: boolean; ms: number },
): string {
  ensurePrivateDirSync(framesDir);
  const id = `${d.ms}-${crypto.randomUUID().slice(0, 8)}`;
  const f = createNewFileSync(framesDir, `${id}.jpg`, { root: sessionDir });
  try {
    writeAllSync(f, d.jpeg);
  } finally {
    f.close();
  }
  const line = JSON.stringify({
    id,
    stream: d.stream,
    timestamp: new Date(d.ms).toISOString(),
    sent_to_live: d.sentToLive,
  }) + "\n";
  const m = openRegularFileSync(framesDir, FRAMES_MANIFEST, { root: sessionDir, append: true });
  try {
    writeAllSync(m, new TextEncoder().encode(line));
  } finally {
    m.close();
  }
  return id;
}
