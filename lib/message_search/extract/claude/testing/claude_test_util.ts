/**
 * Test helpers for the Claude Code extractor: a temp projects root, one-call extraction,
 * and a tiny shard that applies outcomes the way the store does (replace resets, append
 * concatenates), so incremental results can be compared with a full parse.
 */
import { join } from "node:path";
import { deriveActive, type MessageRecord, type SupersessionMark } from "../../../record.ts";
import { createClaudeExtractor } from "../claude.ts";
import type { ExtractOutcome, PriorShard, ShardContent } from "../../framework/plugin.ts";

/** One record as the tests compare it. */
export interface Seen {
  id: string;
  role: string;
  text: string;
  active: boolean;
  subagent: boolean;
}

/** Runs `fn` with a fresh `<tmp>/projects` root, removed afterwards. */
export async function withProjects<T>(fn: (projects: string) => Promise<T>): Promise<T> {
  const dir = await Deno.makeTempDir({ prefix: "claude-extract-" });
  try {
    const projects = join(dir, "projects");
    await Deno.mkdir(projects);
    return await fn(projects);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

/** Writes `lines` (each gets "\n") to `<projects>/<rel>`, creating parents. */
export async function writeLines(projects: string, rel: string, lines: string[]) {
  const path = join(projects, rel);
  await Deno.mkdir(join(path, ".."), { recursive: true });
  await Deno.writeTextFile(path, lines.map((l) => l + "\n").join(""));
  return path;
}

/** Narrows an outcome to shard content. */
export function content(o: ExtractOutcome): ShardContent {
  if (o.kind !== "replace" && o.kind !== "append") {
    throw new Error(`Expected shard content, got "${o.kind}"`);
  }
  return o;
}

/** Records with their derived active flags. */
export function seen(records: MessageRecord[], marks: SupersessionMark[]): Seen[] {
  const flags = deriveActive(records, marks);
  return records.map((r, i) => ({
    id: r.id,
    role: r.role,
    text: r.text,
    active: flags[i]!,
    subagent: r.subagent,
  }));
}

/** Full extraction of every unit under `projects`, by key. */
export async function extractAll(projects: string): Promise<Map<string, ShardContent>> {
  const ex = createClaudeExtractor({ projectRoots: [projects] });
  const out = new Map<string, ShardContent>();
  for (const u of (await ex.discover()).units) {
    out.set(u.key, content(await ex.extract(u, null, { now: Date.now() })));
  }
  return out;
}

/** A shard that applies outcomes like the store, for incremental sweeps. */
export class TestShard {
  records: MessageRecord[] = [];
  marks: SupersessionMark[] = [];
  prior: PriorShard | null = null;
  kinds: string[] = [];

  /** Extracts `key` once more against the current prior and applies the outcome. */
  async sweep(projects: string, key: string, now = Date.now()): Promise<ExtractOutcome> {
    const ex = createClaudeExtractor({ projectRoots: [projects] });
    const unit = (await ex.discover()).units.find((u) => u.key === key);
    if (!unit) throw new Error(`No unit "${key}"`);
    const o = await ex.extract(unit, this.prior, { now });
    this.kinds.push(o.kind);
    if (o.kind === "replace") {
      this.records = [...o.records];
      this.marks = [...o.marks];
    } else if (o.kind === "append") {
      this.records.push(...o.records);
      this.marks.push(...o.marks);
    }
    if (o.kind === "replace" || o.kind === "append") {
      this.prior = {
        generations: [],
        cursors: o.cursors,
        state: JSON.parse(JSON.stringify(o.state)),
        records: this.records.length,
      };
    }
    return o;
  }

  /** Records by id with active flags (order-free comparison). */
  view(): Seen[] {
    return seen(this.records, this.marks).sort((a, b) => (a.id < b.id ? -1 : 1));
  }
}

/** A full parse of `key` compared the same way as {@link TestShard.view}. */
export async function fullView(projects: string, key: string): Promise<Seen[]> {
  const s = new TestShard();
  await s.sweep(projects, key);
  return s.view();
}
