import assert from "node:assert/strict";
import type { MessageRecord } from "../../message_search/mod.ts";
import type { ExternalRow } from "../external_detail.ts";
import type { ToolCallEntry } from "../types.ts";
import { joinActivity, type JoinFile } from "./join.ts";
import type { ActivityItem, FileActivity } from "./types.ts";

const call = (name: string, ts = 0): ToolCallEntry => ({
  name,
  input: "",
  ts_ms: ts,
  status: "ok",
  output: {},
});

function rec(
  id: string,
  role: "user" | "assistant",
  line: number,
  o: { file?: string; generation?: number; ts?: number } = {},
): MessageRecord {
  return {
    id,
    source: "codex",
    session_id: "s",
    role,
    ts_ms: o.ts ?? line * 1000,
    text: id,
    truncated: false,
    locator: {
      v: 1,
      kind: "external_line",
      file: o.file ?? "f",
      generation: 0,
      line,
      hash: "0".repeat(16),
    },
    order: 0,
    generation: o.generation ?? 0,
    subagent: false,
  };
}

const row = (r: MessageRecord, active = true): ExternalRow => ({ kind: "record", rec: r, active });

function file(items: ActivityItem[], o: { rel?: string; subagent?: boolean } = {}): JoinFile {
  const activity: FileActivity = {
    items,
    ids: new Map(),
    parents: new Map(),
    skipped: {},
    bytes: 0,
  };
  return {
    rel: o.rel ?? "f",
    activity,
    subagent: o.subagent ?? false,
    lineOf: (r) => (r.locator.kind === "external_line" ? r.locator.line : null),
  };
}

const at = (line: number, part = 0) => ({ line, part });
const c = (line: number, name: string, by: "agent" | "user" = "agent", part = 0): ActivityItem => ({
  kind: "call",
  pos: at(line, part),
  by,
  call: call(name, line * 1000),
});

/** A compact picture of the joined rows. */
const picture = (rows: ExternalRow[]) =>
  rows.map((r) =>
    r.kind === "record"
      ? `${r.rec.id}${r.tools ? `[${r.tools.map((t) => t.name).join(",")}]` : ""}`
      : r.kind === "tool_calls"
      ? `${r.by}(${r.tools.map((t) => t.name).join(",")})${r.superseded ? "!" : ""}`
      : r.kind === "context_snapshot"
      ? `snap${r.superseded ? "!" : ""}`
      : "cut"
  );

Deno.test("joinActivity hangs calls on the turn's assistant record and opens rows where a turn has none", () => {
  const rows = [
    row(rec("u1", "user", 2)),
    row(rec("a1", "assistant", 5)),
    row(rec("a2", "assistant", 9)),
    { kind: "cut", mark: { kind: "turn_count", after_order: 3, num_turns: 1, generation: 0 } },
    row(rec("u2", "user", 12), false),
    row(rec("a3", "assistant", 20), false),
  ] as ExternalRow[];
  const items: ActivityItem[] = [
    c(1, "early"), // before any record of the file
    c(3, "t1"), // u1's turn, no prose yet
    c(4, "t2"),
    c(5, "same-entry", "agent", 1), // after a1's text, in the same entry
    c(6, "t3"),
    { kind: "turn", pos: at(10) }, // a prompt the index does not hold
    c(11, "t4"),
    c(13, "mine", "user"),
    c(14, "agent-after-user"),
    { kind: "snapshot", pos: at(15), ts_ms: 15, detail: { kind: "compacted" } },
    c(16, "after-snap"),
    c(21, "late"),
  ];
  const out = joinActivity(rows, [file(items)]);
  assert.deepEqual(picture(out), [
    "agent(early)",
    "u1",
    "agent(t1,t2)",
    "a1[same-entry,t3]",
    "a2",
    "agent(t4)",
    "cut",
    "u2",
    "user(mine)!",
    "agent(agent-after-user)!",
    "snap!",
    "agent(after-snap)!",
    "a3[late]",
  ]);
  // Each call once.
  const all = out.flatMap((
    r,
  ) => (r.kind === "record" ? r.tools ?? [] : r.kind === "tool_calls" ? r.tools : []));
  assert.equal(all.length, items.filter((i) => i.kind === "call").length);
  // The input rows are not mutated.
  assert.equal((rows[1] as { tools?: unknown }).tools, undefined);
});

Deno.test("joinActivity: per-file placement, a file with no records by time, old generations not anchored", () => {
  const rows = [
    row(rec("m1", "user", 1, { ts: 100 })),
    row(rec("s1", "assistant", 4, { file: "sub", ts: 200 })),
    row(rec("m2", "assistant", 3, { ts: 300 })),
    row(rec("old", "assistant", 2, { generation: 0, file: "g", ts: 400 })),
    row(rec("new", "user", 7, { generation: 1, file: "g", ts: 500 })),
  ];
  const out = joinActivity(rows, [
    file([c(2, "main-pre")]),
    file([c(2, "sub-pre")], { rel: "sub", subagent: true }),
    file([{ kind: "call", pos: at(1), by: "agent", call: call("lonely", 250) }], { rel: "none" }),
    file([c(3, "gen")], { rel: "g" }),
  ]);
  assert.deepEqual(picture(out), [
    "m1",
    "agent(main-pre)",
    "agent(sub-pre)",
    "s1",
    "agent(lonely)",
    "m2",
    "old",
    "agent(gen)",
    "new",
  ]);
  const sub = out[2]!;
  assert.equal(sub.kind === "tool_calls" && sub.subagent, true);
});

Deno.test("joinActivity takes a tree row's flag from its nearest record ancestor", () => {
  const r1 = {
    ...rec("a", "assistant", 1),
    locator: { v: 1, kind: "external_record_id", record_id: "A", file: "f", hash: "0".repeat(16) },
  } as MessageRecord;
  const r2 = {
    ...rec("b", "user", 2),
    locator: { v: 1, kind: "external_record_id", record_id: "B", file: "f", hash: "0".repeat(16) },
  } as MessageRecord;
  const f = file([
    { kind: "snapshot", pos: at(3), row: "S", ts_ms: 3, detail: { kind: "branch_summary" } },
    { kind: "snapshot", pos: at(4), row: "T", ts_ms: 4, detail: { kind: "compaction" } },
  ]);
  f.lineOf = (r) => (r === r1 ? 1 : 2);
  f.activity.parents.set("S", "A").set("T", "X").set("X", "T"); // a hostile cycle ends
  const out = joinActivity([row(r1), row(r2, false)], [f]);
  assert.deepEqual(picture(out), ["a", "b", "snap", "snap!"]);
});
