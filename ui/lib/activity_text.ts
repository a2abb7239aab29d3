/**
 * An external session's tool-call status (the detail's `activity`, lib/catalog/types.ts
 * ActivityStatus) in plain words: one line when the tool calls beside the prose are not
 * all there — "Tool calls are not shown: …" (none could be read: a database source, a
 * missing or refused file, a gone source) or "Some tool calls could not be read: …" — and,
 * per file that was not read whole, its path and why, the reason code kept for the tooltip.
 * An `ok` status (or none: native sessions, older daemons) says nothing — unless the tool
 * calls came from the vault's copy (`from: "vault"`: its agent deleted the files), which
 * is said ("From the vault: …"), whole or not. Pure.
 */
import type { ActivityStatus } from "../api_client.ts";

/**
 * Why one source file was not read whole, per reason code: every refusal of the contained
 * reader (lib/durable READ_REFUSALS, checked by the test beside this file) and the activity
 * reader's own (read_cap, corrupt, `read_error: <name>`).
 */
const FILE_REASONS: Record<string, string> = {
  missing: "not there (deleted or moved)",
  bad_name: "an unexpected path",
  parent: "in a folder that is a link or not a folder (not followed)",
  symlink: "a symbolic link (not followed)",
  not_regular: "not a regular file",
  swapped: "replaced while it was being opened",
  hardlinked: "a hard link (never read: it may name a file elsewhere)",
  too_large: "too large to read",
  read_cap: "cut at the read limit",
  corrupt: "damaged",
  read_error: "read error",
  not_in_vault: "deleted by its agent and not kept in the vault",
};

/** A file reason code in words ("read_error: X" keeps its detail). */
export function fileReasonText(code: string | undefined): string {
  if (!code) return "not read whole";
  const [head, ...rest] = code.split(": ");
  const phrase = FILE_REASONS[head!] ?? head!.replaceAll("_", " ");
  return rest.length ? `${phrase} (${rest.join(": ")})` : phrase;
}

/** What the detail says about its tool calls, or null when they are all there. */
export interface ActivityLine {
  state: "partial" | "unavailable" | "vault";
  text: string;
  /** The files not read whole: path, reason in words, reason code. */
  files: { file: string; why: string; code: string }[];
}

/** `reason` as the tail of a sentence: its first letter lowered unless it starts a name. */
function tail(reason: string): string {
  return /^[A-Z][a-z]/.test(reason) ? reason[0]!.toLowerCase() + reason.slice(1) : reason;
}

/** The line for `a` (see the module header). */
export function activityLine(a: ActivityStatus | null | undefined): ActivityLine | null {
  if (a?.from === "vault" && a.state === "ok") {
    const text =
      "From the vault: its agent deleted the files; the tool calls are read from the vault's copy";
    return { state: "vault", text, files: [] };
  }
  if (!a || a.state === "ok") return null;
  const files = a.files.filter((f) => f.state !== "ok").map((f) => ({
    file: f.file,
    why: f.state === "truncated" && !f.reason ? "cut at the read limit" : fileReasonText(f.reason),
    code: f.reason ?? f.state,
  }));
  const reason = a.reason ? tail(a.reason) : "";
  if (a.state === "unavailable") {
    const text = reason ? `Tool calls are not shown: ${reason}` : "Tool calls are not shown";
    return { state: "unavailable", text, files };
  }
  const text = reason
    ? `Some tool calls could not be read: ${reason}`
    : "Some tool calls could not be read";
  return { state: "partial", text, files };
}
