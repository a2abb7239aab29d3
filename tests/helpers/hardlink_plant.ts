/**
 * Hard links planted into native session directories (reliability-plan F1). Each secret
 * lives in a file OUTSIDE the state root; the session directory gets a second name of that
 * inode (`ln outside/secret <session>/turns/turn_004_model.txt`), so dev+ino match and only
 * the link count tells. Per round k:
 *  - sidecar: a real session (SessionLog) gains a turn whose conversation_message row
 *    names `turns/turn_004_model.txt`, a hard link to an outside file saying SECRET;
 *  - top-level: a second row names `reply_k.txt` at the session's top level, same trick;
 *  - meta: that session's session_meta.json becomes a hard link to an outside meta whose
 *    name (the listing and search title) is a secret;
 *  - spine: a session directory whose session.jsonl is a hard link to an outside spine
 *    whose task (an inline user row) is a secret.
 * Every secret is one unique word, so a search for it finds exactly what was read.
 */
import { join } from "node:path";
import { writeNativeSession } from "./native_corpus.ts";

/** One planted hard link and the word that proves it was read. */
export interface PlantedLink {
  kind: "sidecar" | "top_level" | "meta" | "spine";
  /** The name inside the session directory. */
  path: string;
  /** The outside file it shares an inode with. */
  target: string;
  secret: string;
  sessionId: string;
  /** For spans: the row's file reference and byte count. */
  rel?: string;
  bytes?: number;
}

/** What {@link plantHardlinks} made. */
export interface HardlinkPlant {
  links: PlantedLink[];
  /** Sessions holding sidecar/top-level/meta links (they index, minus the planted parts). */
  spanSessions: { id: string; dir: string; visibleWord: string }[];
  /** Sessions whose spine is a link (never indexed). */
  spineSessions: string[];
}

function line(ev: Record<string, unknown>): string {
  return JSON.stringify({ ts: "12:00:00.000", ts_ms: Date.now(), ...ev }) + "\n";
}

/** Plants `rounds` rounds of the four link kinds under `logsDir`, targets in `outside`. */
export async function plantHardlinks(
  logsDir: string,
  outside: string,
  rounds: number,
): Promise<HardlinkPlant> {
  const out: HardlinkPlant = { links: [], spanSessions: [], spineSessions: [] };
  const scratch = join(outside, "scratch-logs");
  Deno.mkdirSync(scratch, { recursive: true });
  for (let k = 0; k < rounds; k++) {
    const visibleWord = `hlvisible${k}qx`;
    const s = await writeNativeSession(logsDir, {
      turns: 3,
      task: `Check the ${visibleWord} parser`,
      project: `/home/dev/hl-${k}`,
    });
    out.spanSessions.push({ id: s.id, dir: s.dir, visibleWord });
    // Sidecar and top-level span rows, each naming a hard link to an outside file.
    const spans = [
      { kind: "sidecar" as const, rel: "turns/turn_004_model.txt", seq: 6 },
      { kind: "top_level" as const, rel: `reply_${k}.txt`, seq: 7 },
    ];
    let events = "";
    for (const sp of spans) {
      const secret = `hlsecret${sp.kind.replace("_", "")}${k}zq`;
      const target = join(outside, `${sp.kind}-${k}.txt`);
      const body = `The vault code is ${secret} and it must never leave this file.\n`;
      Deno.writeTextFileSync(target, body);
      const path = join(s.dir, sp.rel);
      Deno.linkSync(target, path);
      const bytes = new TextEncoder().encode(body).length;
      events += line({
        turn: 4,
        event: "model_response",
        data: { model_offset: 0, model_bytes: bytes, has_tool_calls: false },
        file: sp.rel,
      });
      events += line({
        turn: 4,
        event: "conversation_message",
        data: {
          message_seq: sp.seq,
          role: "assistant",
          provenance: "assistant",
          model_offset: 0,
          model_bytes: bytes,
        },
        file: sp.rel,
      });
      out.links.push({
        kind: sp.kind,
        path,
        target,
        secret,
        sessionId: s.id,
        rel: sp.rel,
        bytes,
      });
    }
    Deno.writeTextFileSync(join(s.dir, "session.jsonl"), events, { append: true });
    // The meta: an outside copy whose name is a secret, linked in place of the real one.
    const metaSecret = `hlsecretmeta${k}zq`;
    const metaPath = join(s.dir, "session_meta.json");
    const meta = JSON.parse(Deno.readTextFileSync(metaPath));
    const metaTarget = join(outside, `meta-${k}.json`);
    Deno.writeTextFileSync(
      metaTarget,
      JSON.stringify({ ...meta, name: `Vault ${metaSecret}`, task: `Vault ${metaSecret}` }),
    );
    Deno.removeSync(metaPath);
    Deno.linkSync(metaTarget, metaPath);
    out.links.push({
      kind: "meta",
      path: metaPath,
      target: metaTarget,
      secret: metaSecret,
      sessionId: s.id,
    });
    // The spine: a whole session written outside, linked into a fresh session directory.
    const spineSecret = `hlsecretspine${k}zq`;
    const x = await writeNativeSession(scratch, {
      turns: 1,
      task: `Vault ${spineSecret} notes`,
      project: `/home/dev/hl-spine-${k}`,
    });
    const spineTarget = join(outside, `spine-${k}.jsonl`);
    Deno.renameSync(join(x.dir, "session.jsonl"), spineTarget);
    const dir = join(logsDir, x.id);
    Deno.mkdirSync(dir, { mode: 0o700 });
    Deno.linkSync(spineTarget, join(dir, "session.jsonl"));
    out.links.push({
      kind: "spine",
      path: join(dir, "session.jsonl"),
      target: spineTarget,
      secret: spineSecret,
      sessionId: x.id,
    });
    out.spineSessions.push(x.id);
  }
  Deno.removeSync(scratch, { recursive: true });
  return out;
}

/**
 * The negative control: the reader every copy used to be — lstat, open, fstat dev+ino
 * compare — without a link-count check. Returns the bytes it read, or null if it refused.
 */
export async function naiveContainedRead(path: string): Promise<Uint8Array | null> {
  const before = await Deno.lstat(path);
  if (before.isSymlink || !before.isFile) return null;
  const f = await Deno.open(path, { read: true });
  try {
    const after = await f.stat();
    if (after.dev !== before.dev || after.ino !== before.ino) return null;
    const buf = new Uint8Array(after.size);
    let got = 0;
    while (got < buf.length) {
      const n = await f.read(buf.subarray(got));
      if (n === null) break;
      got += n;
    }
    return buf.subarray(0, got);
  } finally {
    f.close();
  }
}
