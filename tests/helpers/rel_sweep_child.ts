/**
 * Child process for the mid-sweep error tests (reliability-plan B14): runs ONE sweep of
 * the real Indexer with the native extractor over <logsDir> into the store at <root>, and
 * prints the sweep's outcome as one JSON line. The parent runs it under conditions it
 * cannot create in-process: as uid `nobody` (so a mode-000 source really is EACCES, which
 * root never sees) or under `strace -e inject=…:error=EIO` scoped to one source file.
 * Usage: rel_sweep_child.ts <logsDir> <root>
 */
import { createIntendantExtractor, Indexer, openStore } from "../../lib/message_search/mod.ts";
import { PV } from "./store_fixtures.ts";

const [logsDir, root] = Deno.args;
if (!logsDir || !root) throw new Error("usage: rel_sweep_child.ts <logsDir> <root>");
const store = await openStore({ root, parserVersion: PV, windowDays: null });
const indexer = new Indexer({
  store,
  extractors: [createIntendantExtractor({ logsDir })],
  windowDays: null,
});
let out: Record<string, unknown>;
try {
  const r = await indexer.sweep();
  const m = await store.readManifest();
  out = {
    ok: true,
    errors: r.sources.intendant?.errors ?? [],
    records: Object.fromEntries(Object.entries(m.sessions).map(([k, e]) => [k, e.records])),
  };
} catch (err) {
  out = { ok: false, error: err instanceof Error ? `${err.name}: ${err.message}` : String(err) };
}
Deno.stdout.writeSync(new TextEncoder().encode(JSON.stringify(out) + "\n"));
