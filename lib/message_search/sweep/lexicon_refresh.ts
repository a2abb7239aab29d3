/**
 * Keeps the store's lexicon.pack current after sweeps (the daemon; IndexerOptions.lexicon).
 * Owns one background refresh at a time: after a sweep whose revision differs from the one
 * the last refresh started at (the first sweep always asks), Store.refreshLexicon runs off
 * the query path (it rebuilds only when the lexicon is stale, store/lexicon_build.ts). A
 * failed build is logged and costs speed, never a result: the next moved sweep retries.
 * Split out of the indexer with the watcher work (issue 28): sweeps now come from file
 * events as well as requests, and this rule is the same for every one of them.
 */
import type { Store } from "../store/mod.ts";

/** The refresher one indexer holds. */
export class LexiconRefresher {
  readonly #store: Store;
  readonly #logger: ((line: string) => void) | undefined;
  #run: Promise<void> | null = null;
  #revision: number | null = null;
  #stopped = false;

  constructor(o: { store: Store; logger?: (line: string) => void }) {
    this.#store = o.store;
    this.#logger = o.logger;
  }

  /** The refresh under way, if any (settled() and stop() wait for it). */
  get running(): Promise<void> | null {
    return this.#run;
  }

  /** Called after a sweep that ended at `revision`: starts a refresh when it moved. */
  afterSweep(revision: number): void {
    if (this.#run || this.#stopped || revision === this.#revision) return;
    this.#revision = revision;
    const logger = this.#logger;
    this.#run = this.#store.refreshLexicon().then(
      (x) => {
        if (x.built) {
          logger?.(
            `message index: lexicon rebuilt (${x.covered} of ${x.live} generations, ` +
              `${x.entries} entries, ${x.read} read) in ${x.ms} ms`,
          );
        }
      },
      (err) => logger?.(`message index: lexicon refresh failed: ${(err as Error).message}`),
    ).finally(() => (this.#run = null));
  }

  /** No refresh starts after this; resolves once the running one ended. */
  async stop(): Promise<void> {
    this.#stopped = true;
    if (this.#run) await this.#run;
  }
}
