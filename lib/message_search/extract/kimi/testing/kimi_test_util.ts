/**
 * Test helpers for the Kimi extractor suites (imported by kimi_*_test.ts only): writing
 * minimal session directories in kimi-code's layout, wire record makers, and running an
 * extractor over a home the way the indexer would (prior shards carried between calls).
 */
import { join } from "node:path";
import { deriveActive, type MessageRecord, type SupersessionMark } from "../../../record.ts";
import type {
  Extractor,
  ExtractOutcome,
  PriorShard,
  SessionUnit,
  ShardContent,
} from "../../framework/plugin.ts";

/** Writes `<home>/sessions/<bucket>/<id>/` with the given wires (path under the session dir → lines). */
export async function writeSession(
  home: string,
  o: {
    id: string;
    bucket?: string;
    wires: Record<string, string[]>;
    state?: Record<string, unknown> | string;
  },
): Promise<string> {
  const dir = join(home, "sessions", o.bucket ?? "wd_proj_0123456789ab", o.id);
  await Deno.mkdir(dir, { recursive: true });
  for (const [rel, lines] of Object.entries(o.wires)) {
    await Deno.mkdir(join(dir, rel, ".."), { recursive: true });
    await Deno.writeTextFile(join(dir, rel), lines.map((l) => l + "\n").join(""));
  }
  if (o.state !== undefined) {
    const text = typeof o.state === "string" ? o.state : JSON.stringify(o.state);
    await Deno.writeTextFile(join(dir, "state.json"), text);
  }
  return dir;
}

/** One wire line. */
export function line(type: string, payload: Record<string, unknown>, time?: number): string {
  return JSON.stringify({ type, ...payload, ...(time === undefined ? {} : { time }) });
}

/** The metadata header. */
export function meta(protocol = "1.5", createdAt = 1_780_000_000_000): string {
  return JSON.stringify({ type: "metadata", protocol_version: protocol, created_at: createdAt });
}

/** A context.append_message line. */
export function msg(role: string, text: string, origin?: unknown, time?: number): string {
  const message: Record<string, unknown> = {
    role,
    content: [{ type: "text", text }],
    toolCalls: [],
  };
  if (origin !== undefined) message.origin = origin;
  return line("context.append_message", { message }, time);
}

/** step.begin + a text part + step.end (three lines). */
export function reply(uuid: string, text: string, time?: number): string[] {
  const ev = (event: Record<string, unknown>) => line("context.append_loop_event", { event }, time);
  return [
    ev({ type: "step.begin", uuid }),
    ev({ type: "content.part", uuid: `${uuid}p`, stepUuid: uuid, part: { type: "text", text } }),
    ev({ type: "step.end", uuid }),
  ];
}

/** Narrows an outcome to shard content. */
export function content(o: ExtractOutcome): ShardContent {
  if (o.kind !== "replace" && o.kind !== "append") {
    throw new Error(`Expected shard content, got "${o.kind}"`);
  }
  return o;
}

/** A shard as the store would hold it after publishing outcomes in order. */
export class Shard {
  records: MessageRecord[] = [];
  marks: SupersessionMark[] = [];
  prior: PriorShard | null = null;

  apply(o: ExtractOutcome): void {
    if (o.kind !== "replace" && o.kind !== "append") return;
    if (o.kind === "replace") {
      this.records = [];
      this.marks = [];
    }
    this.records.push(...o.records);
    this.marks.push(...o.marks);
    this.prior = {
      generations: [],
      cursors: o.cursors,
      state: o.state,
      records: this.records.length,
    };
  }

  /** [role, text, active] per record in order. */
  rows(): [string, string, boolean][] {
    const active = deriveActive(this.records, this.marks);
    return this.records.map((r, i) => [r.role, r.text, active[i]!]);
  }
}

/** Discovers and returns the unit with `key` (throws when absent). */
export async function unitOf(ex: Extractor, key: string): Promise<SessionUnit> {
  const { units } = await ex.discover();
  const u = units.find((x) => x.key === key);
  if (!u) throw new Error(`No unit "${key}" among ${units.map((x) => x.key).join(", ")}`);
  return u;
}

/** Runs `fn` with a temp dir that is removed afterwards. */
export async function withTemp<T>(fn: (dir: string) => Promise<T>): Promise<T> {
  const dir = await Deno.makeTempDir({ prefix: "kimi-test-" });
  try {
    return await fn(dir);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}
