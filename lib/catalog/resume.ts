/**
 * The resume command shown beside every listed session: what a user pastes into a shell
 * to continue it in its own tool. Every value that came from a file (ids, paths) is
 * shell-quoted unless it is plainly safe, so a hostile id can never become shell syntax.
 * The forms, and why each, are rows of the source table
 * (lib/message_search/source_table.ts): one row per source.
 */
import { type ResumeFacts, sourceRow } from "../message_search/mod.ts";

export type { ResumeFacts };

/** Quotes `s` for a POSIX shell unless it only holds characters that need no quoting. */
export function shellQuote(s: string): string {
  if (/^[A-Za-z0-9._:@%+=,/-]+$/.test(s)) return s;
  return `'${s.replaceAll("'", `'\\''`)}'`;
}

/** The resume command for one session. */
export function resumeCommand(f: ResumeFacts): string {
  return sourceRow(f.source).resume(f, shellQuote);
}
