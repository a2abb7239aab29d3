/**
 * The publish throughput's same-run baseline (bench:team): PostgreSQL's raw ingest of the
 * same rows — every record of every machine store, text and folded text, COPYed by one
 * process into an unindexed table with no constraints, no RLS, no diff and no revision —
 *   deno run -A bench/team/copy_baseline.ts <split-dir> <machines> <team-url>
 * Prints one JSON line {records, ms}. The table is dropped afterwards (it would skew the
 * disk figure).
 */
import { join } from "node:path";
import { decodeRecords, openStore, PARSER_VERSION } from "../../lib/message_search/mod.ts";
import { openTeamDb, parseTeamUrl, RECORD_COLUMNS, toRecordRow } from "../../lib/team/mod.ts";

const [splitDir, n, url] = Deno.args;
if (!splitDir || !n || !url) throw new RangeError("Usage: copy_baseline.ts <dir> <n> <url>");
const db = await openTeamDb(parseTeamUrl(url));
const sql = db.sql;
try {
  await sql.unsafe(`DROP TABLE IF EXISTS bench_copy`);
  await sql.unsafe(
    `CREATE TABLE bench_copy (${
      RECORD_COLUMNS.map((c) =>
        `${c} ${
          ["ord", "role", "seq"].includes(c)
            ? "integer"
            : ["ts_ms", "rev_added"].includes(c)
            ? "bigint"
            : ["truncated", "subagent", "superseded", "has_marks"].includes(c)
            ? "boolean"
            : c === "nul_at"
            ? "integer[]"
            : "text"
        }`
      ).join(", ")
    })`,
  );
  let records = 0;
  const t = performance.now();
  for (let i = 0; i < Number(n); i++) {
    const store = await openStore({
      root: join(splitDir, `m${i}`),
      parserVersion: PARSER_VERSION,
      windowDays: null,
    });
    const m = await store.readManifest();
    const w = await sql.unsafe(`COPY bench_copy (${RECORD_COLUMNS.join(", ")}) FROM STDIN`)
      .writable();
    const write = (s: string) =>
      new Promise<void>((res, rej) => w.write(s, (e) => (e ? rej(e) : res())));
    for (const [key, e] of Object.entries(m.sessions)) {
      for (const g of e.generations) {
        let chunk = "";
        for (const rec of decodeRecords(await store.loadSegment(g))) {
          const row = toRecordRow(rec, {
            machine: `m${i}`,
            sessionKey: key,
            superseded: false,
            rev: 1,
          });
          chunk += RECORD_COLUMNS.map((c) => copyField(row[c])).join("\t") + "\n";
          records++;
        }
        await write(chunk);
      }
    }
    await new Promise<void>((res, rej) => w.end((e?: Error | null) => (e ? rej(e) : res())));
  }
  const ms = performance.now() - t;
  await sql.unsafe(`DROP TABLE bench_copy`);
  console.log(JSON.stringify({ records, ms }));
} finally {
  await db.close();
}

/** One COPY text-format field. */
function copyField(v: unknown): string {
  if (v === null || v === undefined) return "\\N";
  if (Array.isArray(v)) return `{${v.join(",")}}`;
  if (typeof v === "boolean") return v ? "t" : "f";
  return String(v).replace(
    /[\\\t\n\r]/g,
    (c) => c === "\\" ? "\\\\" : c === "\t" ? "\\t" : c === "\n" ? "\\n" : "\\r",
  );
}
