/**
 * `intendant search --sort` through the real program (issue 27): relevance answers a
 * question whose words are spread over sessions, says which words it left out (stderr)
 * and labels related sessions; a question of only common words says so; a bad value exits
 * 2 naming the flag; newest stays the default and needs every word in one message.
 */
import assert from "node:assert/strict";
import { buildAllFixtures } from "./fixtures/all.ts";
import { plantUserMessage as plant } from "./fixtures/plant.ts";
import { runIntendant } from "./helpers/cli.ts";
import { withTempDir } from "./helpers/temp.ts";

Deno.test("intendant search --sort relevance|newest from the command line", async () => {
  await withTempDir(async (root) => {
    const fx = await buildAllFixtures(root);
    plant(fx.homes.codex!, "the quokkaoperator deadlocked on its lease");
    plant(fx.homes.pi!, "quokkaoperator restarts are slow");
    const env = fx.env;
    const indexed = await runIntendant(root, ["index"], { env });
    assert.equal(indexed.code, 0, indexed.stderr);
    const ask = (...args: string[]) => runIntendant(root, ["search", ...args], { env });
    const best = await ask("how did we fix the quokkaoperator deadlock?", "--sort", "relevance");
    assert.equal(best.code, 0, best.stderr);
    assert.match(best.stdout, /^codex /m, "the session holding the most words comes first");
    assert.match(best.stdout, /\(related: /, "the session with some of the words is labelled");
    assert.match(
      best.stderr,
      /^searched: fix, quokkaoperator, deadlock \(left out as common: how, did, we, the\)$/m,
    );
    const exact = await ask("how did we fix the quokkaoperator deadlock?");
    assert.equal(exact.code, 0, exact.stderr);
    assert.match(exact.stdout, /^no matches$/m, "newest needs every word in one message");
    const common = await ask("how did we", "--sort", "relevance");
    assert.equal(common.code, 0, common.stderr);
    assert.match(common.stdout, /^only common words \(how, did, we\): nothing was searched/m);
    const bad = await ask("quokkaoperator", "--sort", "best");
    assert.equal(bad.code, 2);
    assert.match(bad.stderr, /Invalid --sort "best": expected newest or relevance/);
  });
});
