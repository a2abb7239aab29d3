/**
 * The relevance suite's baseline (issue 27): what a plain full-text index would answer.
 * The same prose the search index holds — one row per message, with its session key — in
 * an in-memory node:sqlite FTS5 table (tokenizer `unicode61 remove_diacritics 2`); a
 * question becomes its words ORed, each quoted (nothing dropped: no stopword list, no
 * question-word list — bm25's IDF alone weighs them), messages are ranked by bm25() and
 * sessions by their best message. An empty question (no word) answers nothing.
 * Deno's SQLite is built with FTS5 (checked at open: a missing module throws there, not
 * mid-suite).
 */
import { DatabaseSync } from "node:sqlite";

/** One message to index. */
export interface BaselineMessage {
  key: string;
  text: string;
}

/** An open baseline index. */
export interface Baseline {
  /** Session keys, best first, at most `limit` (@default 10). */
  rank(question: string, limit?: number): string[];
  close(): void;
}

/**
 * A word as unicode61 cuts them: letters, digits and combining marks (a decomposed "é"
 * stays one word; remove_diacritics then folds it). Everything else separates.
 */
const WORD_RE = /[\p{L}\p{N}\p{M}]+/gu;

/** The FTS5 query of a question: every word, quoted, ORed; "" when it has none. */
export function baselineQuery(question: string): string {
  const words = question.match(WORD_RE) ?? [];
  return words.map((w) => `"${w.replaceAll('"', '""')}"`).join(" OR ");
}

/** Indexes `messages` into a fresh in-memory FTS5 table. */
export function openBaseline(messages: Iterable<BaselineMessage>): Baseline {
  const db = new DatabaseSync(":memory:");
  db.exec(
    "CREATE VIRTUAL TABLE m USING fts5(key UNINDEXED, text, tokenize = 'unicode61 remove_diacritics 2')",
  );
  const insert = db.prepare("INSERT INTO m (key, text) VALUES (?, ?)");
  db.exec("BEGIN");
  for (const { key, text } of messages) insert.run(key, text);
  db.exec("COMMIT");
  // bm25() is smaller for better matches; a session's score is its best message's. Key
  // breaks ties so the order is the same on every run. MATERIALIZED: an auxiliary
  // function cannot run inside a flattened aggregate ("unable to use function bm25 in the
  // requested context").
  const query = db.prepare(
    "WITH hit AS MATERIALIZED (SELECT key, bm25(m) AS s FROM m WHERE m MATCH ?) " +
      "SELECT key, MIN(s) AS best FROM hit GROUP BY key ORDER BY best, key LIMIT ?",
  );
  return {
    rank(question, limit = 10) {
      const q = baselineQuery(question);
      if (q === "") return [];
      return query.all(q, limit).map((r) => String(r.key));
    },
    close: () => db.close(),
  };
}
