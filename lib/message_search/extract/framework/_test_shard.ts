/**
 * Test-only helpers for the extractor suites (Gemini, Qwen) (never imported by library code): temp dirs
 * that are always removed, and a Shard that applies outcomes the way the store does
 * (replace resets, append extends) so incremental and full results compare through
 * deriveActive.
 */
import { deriveActive, type MessageRecord, type SupersessionMark } from "../../record.ts";
import type { ExtractOutcome, PriorShard } from "../framework/plugin.ts";

/** Runs `fn` over a fresh temp dir, removed afterwards. */
export async function withDir(fn: (dir: string) => Promise<void>): Promise<void> {
  const dir = await Deno.makeTempDir({ prefix: "extract-test-" });
  try {
    await fn(dir);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

/** One record as a test compares it. */
export interface View {
  id: string;
  role: string;
  text: string;
  active: boolean;
  order: number;
  subagent: boolean;
}

/** Records + marks → what a reader sees. */
export function viewOf(records: MessageRecord[], marks: SupersessionMark[]): View[] {
  const act = deriveActive(records, marks);
  return records.map((r, i) => ({
    id: r.id,
    role: r.role,
    text: r.text,
    active: act[i]!,
    order: r.order,
    subagent: r.subagent,
  }));
}

/** What the store would hold for one unit across sweeps. */
export class Shard {
  records: MessageRecord[] = [];
  marks: SupersessionMark[] = [];
  prior: PriorShard | null = null;
  last: ExtractOutcome | null = null;
  skipped: Record<string, number> = {};
  apply(o: ExtractOutcome): this {
    this.last = o;
    if (o.kind !== "replace" && o.kind !== "append") return this;
    if (o.kind === "replace") {
      this.records = [...o.records];
      this.marks = [...o.marks];
      this.skipped = { ...o.skipped };
    } else {
      this.records = [...this.records, ...o.records];
      this.marks = [...this.marks, ...o.marks];
      for (const [k, v] of Object.entries(o.skipped)) this.skipped[k] = (this.skipped[k] ?? 0) + v;
    }
    this.prior = {
      generations: [],
      cursors: o.cursors,
      state: o.state,
      records: this.records.length,
    };
    return this;
  }
  view(): View[] {
    return viewOf(this.records, this.marks);
  }
}
