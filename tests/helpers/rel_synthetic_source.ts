/**
 * A synthetic source for the model-based store test (reliability-plan A14): one JSONL
 * file per session, `<dir>/<id>.jsonl`, each line `{"ts": <ms>, "text": "…"}`, read by an
 * Extractor built on the real cursor module (classifySource/readIncrement), so appends,
 * in-place rewrites, inode replacement and deletion go through the production
 * classification and torn-line rules. Published as source "codex" (the test's native
 * sessions are "intendant"). The writer helpers stamp the file's mtime with the test's
 * clock, so retention and the indexer's window checks see one consistent time.
 */
import { join } from "node:path";
import { lineText } from "../../lib/durable/mod.ts";
import {
  classifySource,
  CursorMismatchError,
  type Increment,
  readIncrement,
  statSource,
} from "../../lib/message_search/cursor.ts";
import type { Extractor, ExtractOutcome, MessageRecord } from "../../lib/message_search/mod.ts";
import { hash16Of } from "../../lib/message_search/mod.ts";

/** One synthetic line. */
export interface SynLine {
  ts: number;
  text: string;
}

function toRecords(sid: string, inc: Increment, from: number): MessageRecord[] {
  const out: MessageRecord[] = [];
  for (const span of inc.lines) {
    const { ts, text } = JSON.parse(lineText(inc.bytes, span, inc.baseOffset)) as SynLine;
    const order = from + out.length;
    out.push({
      id: `${sid}-e${inc.cursor.rewrite_epoch ?? 0}-l${span.lineNo}`,
      source: "codex",
      session_id: sid,
      role: order % 2 === 0 ? "user" : "assistant",
      ts_ms: ts,
      text,
      truncated: false,
      locator: {
        v: 1,
        kind: "external_record_id",
        record_id: `l${span.lineNo}`,
        file: `${sid}.jsonl`,
        hash: hash16Of(text),
      },
      order,
      generation: 0,
      subagent: false,
    });
  }
  return out;
}

/** The extractor over `dir`. */
export function syntheticExtractor(dir: string): Extractor {
  return {
    source: "codex",
    async discover() {
      const units = [];
      try {
        for await (const e of Deno.readDir(dir)) {
          if (!e.isFile || !e.name.endsWith(".jsonl")) continue;
          const sid = e.name.slice(0, -".jsonl".length);
          units.push({
            source: "codex" as const,
            sessionId: sid,
            key: `codex:${sid}`,
            files: [{ path: join(dir, e.name), role: "main" }],
          });
        }
      } catch (err) {
        if (!(err instanceof Deno.errors.NotFound)) throw err;
      }
      return { units, skipped: {} };
    },
    async extract(unit, prior, ctx): Promise<ExtractOutcome> {
      const path = unit.files[0]!.path;
      const cursor = prior?.cursors[path] ?? null;
      const { class: cls } = await classifySource(path, cursor, { now: ctx.now });
      if (cls.kind === "gone") return { kind: "gone" };
      if (cls.kind === "unchanged") return { kind: "unchanged" };
      const meta = {
        project: "/syn",
        title: unit.sessionId,
        parent_session_id: null,
        files: [path],
      };
      const now = () => ctx.now;
      if (cls.kind === "appended" && cursor && prior) {
        try {
          const inc = await readIncrement(path, cursor, { now });
          return {
            kind: "append",
            records: toRecords(unit.sessionId, inc, prior.records),
            marks: [],
            cursors: { [path]: inc.cursor },
            state: null,
            meta,
            skipped: {},
          };
        } catch (err) {
          if (!(err instanceof CursorMismatchError)) throw err;
        }
      }
      if (await statSource(path) === null) return { kind: "gone" };
      const rewriteEpoch = cursor ? (cursor.rewrite_epoch ?? 0) + 1 : 0;
      const inc = await readIncrement(path, null, { now, rewriteEpoch });
      return {
        kind: "replace",
        records: toRecords(unit.sessionId, inc, 0),
        marks: [],
        cursors: { [path]: inc.cursor },
        state: null,
        meta,
        skipped: {},
      };
    },
  };
}

const enc = new TextEncoder();
const encode = (lines: SynLine[]) =>
  enc.encode(lines.map((l) => JSON.stringify(l) + "\n").join(""));

async function stampMtime(path: string, clockMs: number): Promise<void> {
  await Deno.utime(path, new Date(clockMs), new Date(clockMs));
}

/** Appends lines (one write) and stamps the mtime. */
export async function appendLines(path: string, lines: SynLine[], clockMs: number) {
  const f = await Deno.open(path, { append: true, create: true });
  try {
    await f.write(encode(lines));
  } finally {
    f.close();
  }
  await stampMtime(path, clockMs);
}

/** Rewrites the file: in place (same inode, truncated) or as a new inode (rename over). */
export async function rewriteLines(
  path: string,
  lines: SynLine[],
  o: { inPlace: boolean; clockMs: number },
) {
  if (o.inPlace) {
    await Deno.writeFile(path, encode(lines));
  } else {
    await Deno.writeFile(`${path}.new`, encode(lines));
    await Deno.rename(`${path}.new`, path);
  }
  await stampMtime(path, o.clockMs);
}
