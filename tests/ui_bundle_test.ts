/**
 * The committed UI bundle (ui/gen/bundle.ts, embedded by the server) is exactly what
 * build.ts produces from ui/ today, and the whole UI stays under its gzip budget.
 */
import assert from "node:assert/strict";
import { buildUi, UI_GEN_PATH, UI_GZIP_BUDGET_BYTES, uiModuleSource } from "../build.ts";

Deno.test("ui/gen/bundle.ts is fresh and the UI is within its gzip budget", async () => {
  const ui = await buildUi();
  console.log(
    `UI bundle: ${ui.js.length} bytes js, ${ui.gzipBytes} bytes gzip total (budget ${UI_GZIP_BUDGET_BYTES})`,
  );
  assert.ok(ui.gzipBytes <= UI_GZIP_BUDGET_BYTES);
  assert.equal(
    Deno.readTextFileSync(UI_GEN_PATH),
    uiModuleSource(ui),
    "run `deno task build:ui` and commit ui/gen/bundle.ts",
  );
});
