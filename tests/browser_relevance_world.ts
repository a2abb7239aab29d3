/**
 * The world of the relevance browser suite (tests/browser_relevance_test.ts) and of its
 * screenshot (docs/screens/capture_relevance.ts): the fixture homes (tests/helpers/
 * world.ts) plus native sessions planted so the question RELEVANCE_Q ("where is the marmot
 * lantern": content words marmot, lantern) meets every tier of a relevance page —
 *  - exact: one message holds both words (two sessions);
 *  - partial: only "marmot" (related · 1 of 2 words);
 *  - spread: "lantern" in the task, "marmot" in the reply (all words, across messages);
 *  - loose: both words in one message, "marmot" only with its accent stripped ("mármot");
 * and ONLY_COMMON_Q, a question of nothing but common words. Nothing is mocked: the
 * sessions go through the real SessionLog writer and the real indexer.
 */
import { writeNativeSession } from "./helpers/native_corpus.ts";
import { buildWorld, type World } from "./helpers/world.ts";

/** A question with two content words and three common ones. */
export const RELEVANCE_Q = "where is the marmot lantern";
/** A question of common words only: a relevance request searches nothing. */
export const ONLY_COMMON_Q = "how did we do that";

/** The planted sessions' keys, by tier. */
export interface RelevancePlanted {
  exact: string[];
  partial: string;
  spread: string;
  loose: string;
}

/** A world (fixtures + planted sessions), indexed. */
export async function buildRelevanceWorld(
  root: string,
): Promise<{ world: World; planted: RelevancePlanted }> {
  const world = await buildWorld(root);
  let t = Date.now() - 86_400_000;
  const clock = () => (t += 1000);
  const one = async (task: string, word: string) =>
    `intendant:${
      (await writeNativeSession(world.cfg.logsDir, {
        turns: 1,
        task,
        now: clock,
        word: () => word,
      })).id
    }`;
  const planted: RelevancePlanted = {
    exact: [
      await one("Hang the marmot lantern by the gate", "the gate hinge"),
      await one("Marmot lantern repair notes", "the wick and the glass"),
    ],
    partial: await one("Feed the marmot at dawn", "the feeding log"),
    spread: await one("Clean the lantern glass", "the marmot burrow"),
    loose: await one("Light the lantern beside the mármot den", "the den entrance"),
  };
  await world.indexer.sweep();
  return { world, planted };
}
