/**
 * The sources the index knows, in display order, with their labels. Mirrors the server's
 * SOURCES without importing it (a value import would pull the server's schema code into
 * the bundle); the Record type makes a source added on the server a type error here.
 */
import type { Source } from "../api_client.ts";

/** Human labels, in display order. */
export const SOURCE_LABEL: Record<Source, string> = {
  intendant: "Intendant",
  codex: "Codex",
  "claude-code": "Claude Code",
  kimi: "Kimi",
  pi: "Pi",
};

/** Every source, in display order. */
export const SOURCE_LIST = Object.keys(SOURCE_LABEL) as Source[];
