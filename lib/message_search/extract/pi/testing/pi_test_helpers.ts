/**
 * Test-only helpers shared by the Pi extractor suites (never imported by library code):
 * temp dirs that are always removed, a small live session written like Pi writes it, and
 * a Shard that applies outcomes the way the store does (replace resets, append extends)
 * so incremental and full results can be compared through deriveActive.
 */
import assert from "node:assert/strict";
import { PiSessionWriter, writePiSession } from "../../../../../tests/fixtures/pi_fixture.ts";
import { deriveActive, type MessageRecord, type SupersessionMark } from "../../../record.ts";
import { createPiExtractor } from "../pi.ts";
import type { ExtractOutcome, PriorShard, SessionUnit } from "../../framework/plugin.ts";

/** Runs `fn` over a fresh temp dir, removed afterwards. */
export async function withDir(fn: (dir: string) => Promise<void>): Promise<void> {
  const dir = await Deno.makeTempDir({ prefix: "pi-test-" });
  try {
    await fn(dir);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

/** What the store would hold for one unit across sweeps. */
export class Shard {
  records: MessageRecord[] = [];
  marks: SupersessionMark[] = [];
  prior: PriorShard | null = null;
  last: ExtractOutcome | null = null;
  apply(o: ExtractOutcome): this {
    this.last = o;
    if (o.kind !== "replace" && o.kind !== "append") return this;
    if (o.kind === "replace") [this.records, this.marks] = [[...o.records], [...o.marks]];
    else {[this.records, this.marks] = [[...this.records, ...o.records], [
        ...this.marks,
        ...o.marks,
      ]];}
    this.prior = {
      generations: [],
      cursors: o.cursors,
      state: o.state,
      records: this.records.length,
    };
    return this;
  }
  view(): { id: string; role: string; text: string; active: boolean; order: number }[] {
    const act = deriveActive(this.records, this.marks);
    return this.records.map((r, i) => ({
      id: r.id,
      role: r.role,
      text: r.text,
      active: act[i]!,
      order: r.order,
    }));
  }
}

/** A small live session: user/assistant pairs, returned with its writer and path. */
export async function liveSession(dir: string, turns = 2) {
  let t = Date.now() - 3_600_000;
  const w = new PiSessionWriter("11111111-2222-4333-8444-555555555555", () => (t += 1000), {
    timestamp: new Date(t).toISOString(),
    cwd: "/home/dev/p",
  });
  for (let i = 0; i < turns; i++) {
    w.user(`question ${i}`);
    w.assistant([{ type: "text", text: `answer ${i}` }]);
  }
  const path = await writePiSession(dir, "/home/dev/p", w, t);
  return { w, path };
}

/** The single unit discovered under `dir`. */
export async function unitOf(dir: string): Promise<SessionUnit> {
  const d = await createPiExtractor({ agentDirs: [dir] }).discover();
  assert.equal(d.units.length, 1);
  return d.units[0]!;
}
