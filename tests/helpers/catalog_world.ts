/**
 * A real world for catalog tests: the fixture homes of every tool (exact formats), extra
 * native sessions written by the real SessionLog writer, and optionally a session made
 * by the REAL program (`intendant run` with a mock script: reasoning, a command with
 * stdout/stderr, three answers) then rolled back offline with `intendant ctl rollback`.
 * Everything is indexed by the real indexer into a real store. Unique marker words sit
 * where only Deep Search can reach them (reasoning, tool output).
 */
import { join } from "node:path";
import { resolveConfig } from "../../lib/config.ts";
import {
  createMessageIndex,
  decodeRecords,
  encodeLocator,
  type Indexer,
  type MessageRecord,
  type Store,
} from "../../lib/message_search/mod.ts";
import type { CatalogDeps } from "../../lib/catalog/mod.ts";
import { buildAllFixtures } from "../fixtures/all.ts";
import type { FixtureHome } from "../fixtures/types.ts";
import { runIntendant, sessionOf } from "./cli.ts";
import { writeNativeSession } from "./native_corpus.ts";
import { hermeticEnv } from "./temp.ts";

export const REASONING_MARK = "QUOKKA-REASONING-7731";
export const TOOL_MARK = "WOMBAT-TOOLOUT-4412";

/** What a catalog world holds. */
export interface CatalogWorld {
  root: string;
  env: Record<string, string>;
  logsDir: string;
  namesPath: string;
  store: Store;
  indexer: Indexer;
  deps: CatalogDeps;
  homes: Record<string, FixtureHome>;
  natives: { id: string; dir: string; texts: string[] }[];
  runner: { id: string; dir: string } | null;
}

/** Builds the world under `root`. */
export async function buildCatalogWorld(
  root: string,
  o: { runner?: boolean; natives?: number } = {},
): Promise<CatalogWorld> {
  const fixtures = await buildAllFixtures(root);
  const { homes } = fixtures;
  const env = hermeticEnv(root, fixtures.env);
  const cfg = resolveConfig(env, { cwd: root });
  const natives = [];
  let t = Date.now() - 2 * 3_600_000;
  for (let i = 0; i < (o.natives ?? 2); i++) {
    natives.push(
      await writeNativeSession(cfg.logsDir, {
        turns: 7,
        task: `Native task ${i}: tidy the parser`,
        project: `/home/dev/native-${i}`,
        now: () => (t += 1000),
      }),
    );
  }
  const runner = o.runner === false ? null : await runnerSession(root, env);
  const { store, indexer } = await createMessageIndex(cfg);
  await indexer.sweep();
  return {
    root,
    env,
    logsDir: cfg.logsDir,
    namesPath: cfg.sessionNamesPath,
    store,
    indexer,
    deps: { logsDir: cfg.logsDir, store, namesPath: cfg.sessionNamesPath },
    homes,
    natives,
    runner,
  };
}

async function runnerSession(root: string, env: Record<string, string>) {
  const script = join(root, "catalog_script.jsonc");
  Deno.writeTextFileSync(
    script,
    JSON.stringify({
      turns: [
        {
          reasoning: `Think first: ${REASONING_MARK} lives only in reasoning.`,
          text: "Let me look around the project.",
          commands: [{ exec: `echo ${TOOL_MARK}; echo err-line >&2`, nonce: "n1" }],
        },
        { text: "The second answer, later rolled back." },
        { text: "All done.", done: true },
      ],
    }),
  );
  const run = await runIntendant(root, [
    "run",
    "--mock-script",
    script,
    "--name",
    "Runner session",
    "Inspect the project",
  ], { env });
  if (run.code !== 0) throw new Error(`intendant run failed: ${run.stderr}`);
  const s = sessionOf(run);
  const rb = await runIntendant(root, ["ctl", "rollback", s.id, "--to-seq", "2"], { env });
  if (rb.code !== 0) throw new Error(`intendant ctl rollback failed: ${rb.stderr}`);
  return s;
}

/** The records of one session's shard (all segments, in order). */
export async function shardRecords(store: Store, key: string): Promise<MessageRecord[]> {
  const m = await store.readManifest();
  const e = m.sessions[key];
  if (!e) throw new Error(`No shard for "${key}"`);
  const out: MessageRecord[] = [];
  for (const g of e.generations) out.push(...decodeRecords(await store.loadSegment(g)));
  return out.sort((a, b) => a.order - b.order);
}

/** The base64url locator of a record (what a search hit carries). */
export function locatorOf(r: MessageRecord): string {
  return encodeLocator(r.locator);
}
