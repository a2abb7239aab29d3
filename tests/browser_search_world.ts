/**
 * The world of the "second hour" browser suite (tests/browser_second_hour_test.ts) and of
 * its screenshots (docs/screens/capture_search.ts): every source's fixture home (the twelve,
 * so OpenCode and Goose sessions are there) plus native sessions planted for what a new
 * user meets once they search for real —
 *  - ZEBRA: 24 sessions mention "zebra" (more than one 20-session lane page), 6 of them in
 *    their title, so the title lane has a screenful;
 *  - OKAPI: two messages whose match sits on line 9 — of a numbered list, and of a fenced
 *    code block — below a four-line card clamp;
 *  - QUAGGA: one message whose match opens a paragraph far longer than a snippet window, so
 *    its snippet stops before the message does (`snippet_cut_end`);
 *  - a message with a GFM table (and a wide one, for a phone), and one in Japanese with 龍.
 * plantSearchSessions only writes files (a real `serve` of any checkout can index them);
 * buildSearchWorld also indexes them in process, for the browser rig.
 */
import { resolveConfig, type ResolvedConfig } from "../lib/config.ts";
import { createMessageIndex, type Indexer, type Store } from "../lib/message_search/mod.ts";
import { buildAllFixtures } from "./fixtures/all.ts";
import type { AnyFixtureHome } from "./fixtures/types.ts";
import { writeNativeSession } from "./helpers/native_corpus.ts";
import { hermeticEnv } from "./helpers/temp.ts";

/** Sessions whose messages hold "zebra"; TITLED of them also in their title. */
export const ZEBRA_SESSIONS = 24;
export const ZEBRA_TITLED = 6;
/** The word whose only matches sit on line 9 of a long message. */
export const OKAPI = "okapi";
/** The word that opens a message longer than a snippet window. */
export const QUAGGA = "quagga";
/** That message: the word, then ~900 bytes of plain words. */
export const LONG_TEXT = `the ${QUAGGA} survey, ${
  "then the field notes of the next valley ".repeat(22)
}`;
/** The CJK word: one Han character. */
export const DRAGON = "龍";

/** A list whose 8th item (line 9 of the message, after "Turn 1: checked ") holds the word. */
export const LIST_TEXT = "\n" + Array.from(
  { length: 10 },
  (_, i) => i === 7 ? `8. Rotate the ${OKAPI} signing key` : `${i + 1}. Check step ${i + 1}`,
).join("\n") + "\n";

/** A code block whose 8th line holds the word. */
export const CODE_TEXT = "\n```sh\n" + Array.from(
  { length: 10 },
  (_, i) => i === 7 ? `deploy --key ${OKAPI}-release.pem` : `echo "step ${i + 1}"`,
).join("\n") + "\n```\n";

/** A GFM table: alignment, inline Markdown in cells, an escaped pipe, a short row. */
export const TABLE_TEXT = [
  "",
  "",
  "| Check | Result | Time |",
  "|:------|:------:|-----:|",
  "| `deno lint` | **passed** | 1.2 s |",
  "| unit tests | 2 failed: `a \\| b` | 14 s |",
  "| e2e |",
  "",
  "",
].join("\n");

/** A table wider than a phone. */
export const WIDE_TABLE_TEXT = [
  "",
  "",
  "| Service | Region | Replicas | CPU request | Memory limit | Image tag |",
  "|---|---|---:|---:|---:|---|",
  "| checkout-api | eu-west-1 | 6 | 500m | 1Gi | registry.example/checkout:2026.05.18 |",
  "| search-indexer | us-east-2 | 3 | 2000m | 4Gi | registry.example/indexer:2026.05.17 |",
  "",
  "",
].join("\n");

/** The planted sessions' ids, by role in the suite. */
export interface Planted {
  list: string;
  code: string;
  table: string;
  wideTable: string;
  dragon: string;
  long: string;
  zebra: string[];
}

/** Writes the planted native sessions under `logsDir` (files only). */
export async function plantSearchSessions(
  logsDir: string,
  now = Date.now(),
): Promise<Planted> {
  let t = now - 2 * 86_400_000;
  const clock = () => (t += 1000);
  const one = async (task: string, word: string) =>
    (await writeNativeSession(logsDir, { turns: 1, task, now: clock, word: () => word })).id;
  const zebra: string[] = [];
  for (let i = 0; i < ZEBRA_SESSIONS; i++) {
    const titled = i >= ZEBRA_SESSIONS - ZEBRA_TITLED; // the newest: first in both lanes
    const task = titled ? `Zebra crossing audit ${i}` : `Herd review ${i}`;
    zebra.push(await one(task, `the zebra herd near gate ${i}`));
  }
  return {
    zebra,
    list: await one("Release checklist for the mobile app", LIST_TEXT),
    code: await one("Deploy script for the signing service", CODE_TEXT),
    table: await one("Summarise the CI run", TABLE_TEXT),
    wideTable: await one("List the services per region", WIDE_TABLE_TEXT),
    dragon: await one("Draw the banner", `東京の${DRAGON}の旗 (the ${DRAGON} banner)`),
    long: await one("Write up the survey", LONG_TEXT),
  };
}

/** A world for the rig: cfg, store and indexer over every fixture and the planted sessions. */
export interface SearchWorld {
  root: string;
  env: Record<string, string>;
  cfg: ResolvedConfig;
  store: Store;
  indexer: Indexer;
  homes: Record<string, AnyFixtureHome>;
  planted: Planted;
}

/** The hermetic environment of a search world under `root` (fixtures built there). */
export async function searchWorldFiles(
  root: string,
): Promise<
  { env: Record<string, string>; homes: Record<string, AnyFixtureHome>; planted: Planted }
> {
  const fixtures = await buildAllFixtures(root, { sources: "all" });
  const env = hermeticEnv(root, fixtures.env);
  const cfg = resolveConfig(env, { cwd: root });
  const planted = await plantSearchSessions(cfg.logsDir);
  return { env, homes: fixtures.homes, planted };
}

/** Builds and indexes a search world under `root`. */
export async function buildSearchWorld(root: string): Promise<SearchWorld> {
  const { env, homes, planted } = await searchWorldFiles(root);
  const cfg = resolveConfig(env, { cwd: root });
  const { store, indexer } = await createMessageIndex(cfg);
  await indexer.sweep();
  return { root, env, cfg, store, indexer, homes, planted };
}

/** The session key of a planted native session. */
export const nativeKey = (id: string) => `intendant:${id}`;
