/**
 * Test support for the Codex extractor suites (codex_*_test.ts), not used by production
 * code: rollout line builders in Codex's exact envelope (../FORMAT.md §2), and an
 * in-memory shard that applies outcomes the way the store does (replace resets, append
 * concatenates, cursors and state replaced), validating every record and mark against
 * the store's schemas so an invalid segment fails the test instead of being rejected
 * silently at publish time.
 */
import { join } from "node:path";
import {
  deriveActive,
  MarkSchema,
  type MessageRecord,
  MessageRecordSchema,
} from "../../../record.ts";
import type { SupersessionMark } from "../../../record.ts";
import type { FileCursor } from "../../../cursor_types.ts";
import type { Extractor, ExtractOutcome, PriorShard } from "../../framework/plugin.ts";

/** A fixed thread id for hand-written rollouts. */
export const THREAD = "019ad7c2-1f00-7a3e-9b1c-5d2e8f4a6b10";

/** `sessions/2026/05/18/rollout-…-<id>.jsonl` under `home`. */
export function rolloutPath(home: string, id = THREAD, archived = false): string {
  const name = `rollout-2026-05-18T11-14-03-${id}.jsonl`;
  return archived
    ? join(home, "archived_sessions", name)
    : join(home, "sessions", "2026", "05", "18", name);
}

let clock = Date.parse("2026-05-18T09:14:03.000Z");

/** One rollout line (with its "\n"). */
export function line(type: string, payload: Record<string, unknown>): string {
  clock += 1000;
  return JSON.stringify({ timestamp: new Date(clock).toISOString(), type, payload }) + "\n";
}

export const meta = (extra: Record<string, unknown> = {}) =>
  line("session_meta", { id: THREAD, cwd: "/home/dev/alpha", source: "cli", ...extra });
export const user = (message: string, extra: Record<string, unknown> = {}) =>
  line("event_msg", { type: "user_message", message, ...extra });
export const userItem = (text: string, role = "user") =>
  line("response_item", { type: "message", role, content: [{ type: "input_text", text }] });
export const said = (text: string | string[], id?: string) =>
  line("response_item", {
    type: "message",
    role: "assistant",
    ...(id ? { id } : {}),
    content: (Array.isArray(text) ? text : [text]).map((t) => ({ type: "output_text", text: t })),
  });
export const rollback = (num_turns: number) =>
  line("event_msg", { type: "thread_rolled_back", num_turns });

/** Writes `text` to `path`, creating parents. */
export async function writeRollout(path: string, text: string | Uint8Array): Promise<void> {
  await Deno.mkdir(join(path, ".."), { recursive: true });
  if (typeof text === "string") await Deno.writeTextFile(path, text);
  else await Deno.writeFile(path, text);
}

/** Appends `text` to `path`. */
export async function appendRollout(path: string, text: string): Promise<void> {
  await Deno.writeTextFile(path, text, { append: true });
}

/** A shard as the store would hold it. */
export class MemShard {
  records: MessageRecord[] = [];
  marks: SupersessionMark[] = [];
  cursors: Record<string, FileCursor> = {};
  state: unknown = null;
  skipped: Record<string, number> = {};
  published = false;

  get prior(): PriorShard | null {
    if (!this.published) return null;
    const { cursors, state } = this;
    return { generations: [], cursors, state, records: this.records.length };
  }

  apply(o: ExtractOutcome): void {
    if (o.kind !== "replace" && o.kind !== "append") return;
    for (const r of o.records) MessageRecordSchema.parse(r);
    for (const m of o.marks) MarkSchema.parse(m);
    if (o.kind === "replace") {
      this.records = [];
      this.marks = [];
      this.skipped = {};
    }
    o.records.forEach((r, i) => {
      if (r.order !== this.records.length + i) {
        throw new Error(
          `Record order ${r.order} does not continue the shard at ${this.records.length + i}`,
        );
      }
    });
    this.records.push(...o.records);
    this.marks.push(...o.marks);
    this.cursors = o.cursors;
    this.state = o.state;
    for (const [k, n] of Object.entries(o.skipped)) this.skipped[k] = (this.skipped[k] ?? 0) + n;
    this.published = true;
    const ids = new Set(this.records.map((r) => r.id));
    if (ids.size !== this.records.length) throw new Error("Record ids are not unique in the shard");
  }

  /** [role, text, active] per record, in order. */
  view(): [string, string, boolean][] {
    const act = deriveActive(this.records, this.marks);
    return this.records.map((r, i) => [r.role, r.text, act[i]!]);
  }
}

/** Discovers, extracts the unit `key` (the only one when omitted) into `shard`. */
export async function sweep(
  ex: Extractor,
  shard: MemShard,
  key = `codex:${THREAD}`,
): Promise<ExtractOutcome> {
  const { units } = await ex.discover();
  const unit = units.find((u) => u.key === key);
  if (!unit) return { kind: "gone" };
  const o = await ex.extract(unit, shard.prior, { now: Date.now() });
  shard.apply(o);
  return o;
}

/** Runs `fn` in a fresh temp dir, removed afterwards. */
export async function withTemp<T>(fn: (dir: string) => Promise<T>): Promise<T> {
  const dir = await Deno.makeTempDir({ prefix: "codex-extract-" });
  try {
    return await fn(dir);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}
