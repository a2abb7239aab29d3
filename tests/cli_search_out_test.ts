/**
 * What `intendant search` prints, through the real program over every agent's fixture
 * home (issue 25): the page's count against the query's total ("2 of 13 sessions", never
 * "so far"), cursor pages keeping the whole query's total, snippets that start and end on
 * a word with "…" where the message goes on, one CJK character as a query, and hints on
 * stderr only for wider searches that really find something.
 */
import assert from "node:assert/strict";
import { buildAllFixtures } from "./fixtures/all.ts";
import { plantUserMessage as plant } from "./fixtures/plant.ts";
import { runIntendant } from "./helpers/cli.ts";
import { hermeticEnv, withTempDir } from "./helpers/temp.ts";

const WORD = "brontosaurus";

Deno.test("search prints 'N of M sessions', word-edged snippets, CJK single characters and honest hints", async () => {
  await withTempDir(async (root) => {
    const fixtures = await buildAllFixtures(root, { sources: "all" });
    const filler = Array.from({ length: 60 }, (_, i) => `multipart${i}`).join(" ");
    for (const h of Object.values(fixtures.homes)) {
      plant(h, `${filler} ${WORD} uploads ${filler} near the 龍 gate`);
    }
    const env = hermeticEnv(root, fixtures.env);
    const run = (...args: string[]) => runIntendant(root, args, { env });
    const n = Object.keys(fixtures.homes).length;
    assert.equal((await run("index")).code, 0);

    const first = await run("search", WORD, "--limit", "2");
    assert.equal(first.code, 0, first.stderr);
    const m = /^\(2 of (\d+) sessions; more: --cursor (\S+)\)$/m.exec(first.stdout);
    assert.ok(m, first.stdout);
    const total = Number(m[1]);
    assert.ok(total >= n, `${total} ≥ ${n}`);
    assert.doesNotMatch(first.stdout, /so far/);
    // The next page still states the whole query's total.
    const second = await run("search", WORD, "--limit", "2", "--cursor", m[2]!);
    assert.match(
      second.stdout,
      new RegExp(`^\\(2 of ${total} sessions; more: --cursor \\S+\\)$`, "m"),
    );
    // All on one page: the count is the page's.
    const all = await run("search", WORD, "--limit", "100");
    assert.match(all.stdout, new RegExp(`^\\(${total} sessions\\)$`, "m"));
    // Snippets of a long message: whole words, "…" on both cut edges.
    const hit = all.stdout.split("\n").find((l) => l.includes(`«${WORD}»`));
    assert.ok(hit, all.stdout);
    assert.match(hit!, /: …multipart\d+ .*«brontosaurus» uploads .* multipart\d+…$/);

    // One CJK character is a query of its own.
    const dragon = await run("search", "龍");
    assert.equal(dragon.code, 0, dragon.stderr);
    assert.match(dragon.stdout, /«龍»/);
    const letter = await run("search", "x");
    assert.equal(letter.code, 2);
    assert.match(letter.stderr, /type at least 2 characters \(one is enough for a Chinese/);

    // Nothing anywhere: "no matches" and no hint.
    const none = await run("search", "zzyzxnothing");
    assert.equal(none.stdout, "no matches\n");
    assert.equal(none.stderr, "");
    // Said only by the user: an assistant-only search suggests the role, with its count.
    const userOnly = await run("search", "龍 gate", "--role", "assistant");
    assert.equal(userOnly.stdout, "no matches\n");
    assert.match(
      userOnly.stderr,
      new RegExp(`^hint: searching without --role \\(both roles\\) finds ${total} sessions$`, "m"),
    );
    assert.doesNotMatch(userOnly.stderr, /--include-superseded/);
  });
});
