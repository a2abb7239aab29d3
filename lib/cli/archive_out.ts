/**
 * The line `intendant search --archive` adds under its listing: that the page came from
 * the archive (sessions older than the window, lib/message_search archive/), and what it
 * did not cover, in words, and which of its sessions were read from the transcript vault
 * (their agent deleted the files; the vault can put them back). Every string is ours (no transcript text), but it still goes
 * through terminalSafe: the block can come from a daemon over the network.
 */
import type { ArchiveBlock } from "../message_search/mod.ts";
import { terminalSafe } from "../text/mod.ts";

/** The archive line(s) for a page's block; "" when the page has none. */
export function archiveLines(block: ArchiveBlock | undefined): string {
  if (!block) return "";
  const older = block.window_days === null
    ? "every kept message (no window is set)"
    : `messages older than the ${block.window_days}-day window`;
  const head = `(from the archive: ${older}; ${block.archived_sessions} archived sessions` +
    `${block.complete ? ", complete" : ""})`;
  const gaps = block.not_covered.map((n) => `(not covered: ${n})`);
  // Older daemons send no from_vault.
  const kept = block.from_vault ?? [];
  const vault = kept.length === 0 ? [] : [
    `(from the transcript vault: ${kept.length} of these sessions, deleted by their agent; ` +
    `\`intendant vault restore ${kept[0]}\` puts one back)`,
  ];
  return [head, ...vault, ...gaps].map((l) => terminalSafe(l)).join("\n") + "\n";
}
