import assert from "node:assert/strict";
import { SOURCE_PLUGINS, WIRED_SOURCES } from "./extract/mod.ts";
import { buildExtractors, PARSER_VERSION, poolSpecOf } from "./extractor_set.ts";
import { SOURCES } from "./record.ts";
import { SOURCE_TABLE } from "./source_table.ts";
import { SEGMENT_SCHEMA } from "./store/types.ts";
import { SOURCE_HOME_RULES } from "../source_homes.ts";

Deno.test("every source is registered, in SOURCES order, and counted in the parser version", () => {
  assert.deepEqual([...WIRED_SOURCES], [...SOURCES]);
  assert.equal(
    PARSER_VERSION,
    SOURCE_PLUGINS.reduce((n, p) => n + p.parserVersion, 0) + SEGMENT_SCHEMA,
  );
});

Deno.test("the SQLite sources stay off the worker pool; every other extractor is poolable", () => {
  const roots = { logsDir: "/s/logs", homes: [] };
  const built = buildExtractors(roots);
  assert.deepEqual(built.map((e) => e.source), [...SOURCES]);
  for (const ex of built) {
    const pooled = poolSpecOf(ex) !== null;
    assert.equal(pooled, !["opencode", "goose"].includes(ex.source), ex.source);
  }
});

Deno.test("each source table row's home is its home rule", () => {
  for (const [id, rule] of Object.entries(SOURCE_HOME_RULES)) {
    assert.equal(SOURCE_TABLE[id as keyof typeof SOURCE_TABLE].home, rule, id);
  }
  assert.equal(SOURCE_TABLE.intendant.home, null);
  assert.equal(Object.keys(SOURCE_HOME_RULES).length, SOURCES.length - 1);
});
