/**
 * Session → Markdown, built in the browser from the entries the detail view holds (no
 * server round trip beyond the detail pages themselves). Messages become headed
 * sections with their text verbatim, followed by their turn's tool calls; commands,
 * tool inputs and output become fenced blocks whose
 * fence is longer than any backtick run inside (so no content can close it early);
 * rollbacks become a visible rule, and superseded messages keep a label. Times are UTC
 * ISO-8601, so the same session exports to the same bytes anywhere.
 * Secrets are ALWAYS masked in the export, whatever the dashboard's "Mask secrets" switch
 * says: a file leaves the machine's control (it gets pasted, attached, committed). The
 * finished document goes through the masker once (lib/secrets/mod.ts), so every part —
 * title, project, messages, tool inputs and outputs — is covered by one pass and nothing
 * is masked twice; a masked form adds no backtick run the original lacked, so a fence
 * chosen for the original body still holds. The file name is built from the masked title. Pure.
 */
import type { DetailEntry, SessionSummary } from "../api_client.ts";
import { maskSecrets, maskTitle } from "../../lib/secrets/mod.ts";

/** Options for {@link sessionMarkdown}. */
export interface MarkdownOptions {
  /** Entries in the full session (to say when the export is partial). */
  total: number;
}

function iso(ms: number | null | undefined): string | null {
  if (typeof ms !== "number" || !Number.isFinite(ms)) return null;
  return new Date(ms).toISOString().replace(/\.\d{3}Z$/, "Z");
}

/** A fenced block whose fence no run of backticks in `body` can close. */
export function fenced(body: string, lang = ""): string {
  const longest = Math.max(0, ...[...body.matchAll(/`+/g)].map((m) => m[0].length));
  const fence = "`".repeat(Math.max(3, longest + 1));
  return `${fence}${lang}\n${body.replace(/\n$/, "")}\n${fence}`;
}

/** Inline code that survives backticks in the value. */
function code(s: string): string {
  const longest = Math.max(0, ...[...s.matchAll(/`+/g)].map((m) => m[0].length));
  const tick = "`".repeat(longest + 1);
  return longest ? `${tick} ${s} ${tick}` : `${tick}${s}${tick}`;
}

/** The title the UI shows for a session. */
export function sessionTitle(s: Pick<SessionSummary, "name" | "title" | "session_id">): string {
  return s.name || s.title || s.session_id;
}

function detailOf(e: DetailEntry): Record<string, unknown> {
  return e.detail && typeof e.detail === "object" ? e.detail as Record<string, unknown> : {};
}

function outputBlocks(e: DetailEntry): string[] {
  const out = detailOf(e).output as
    | Record<string, { excerpt?: string; unavailable?: string }>
    | undefined;
  const blocks: string[] = [];
  for (const [label, o] of Object.entries(out ?? {})) {
    if (typeof o?.excerpt === "string" && o.excerpt) {
      blocks.push(`${label}:\n\n${fenced(o.excerpt)}`);
    } else if (o?.unavailable) blocks.push(`${label}: _unavailable (${o.unavailable})_`);
  }
  return blocks;
}

/** A turn's tool calls: each call's line, its input and its output excerpts, fenced. */
function toolBlocks(e: DetailEntry): string[] {
  return (e.tools ?? []).map((t) => {
    const exit = typeof t.exit_code === "number" ? `exit ${t.exit_code}` : t.status;
    const outs = Object.entries(t.output ?? {}).map(([label, o]) =>
      o.unavailable
        ? `${label}: _unavailable (${o.unavailable})_`
        : o.excerpt
        ? `${label}${o.truncated ? " (excerpt)" : ""}:\n\n${fenced(o.excerpt)}`
        : `${label}: _empty_`
    );
    return [`**Tool call · ${t.name} · ${exit}**`, fenced(t.input, "sh"), ...outs].join("\n\n");
  });
}

/** One entry as Markdown. */
export function entryMarkdown(e: DetailEntry): string {
  const when = iso(e.ts_ms);
  const at = when ? ` · ${when}` : "";
  const d = detailOf(e);
  switch (e.kind) {
    case "message": {
      const who = e.role === "assistant" ? "Assistant" : "User";
      const tags = [
        typeof d.provenance === "string" && d.provenance !== "assistant" ? d.provenance : null,
        e.subagent ? "subagent" : null,
        e.superseded ? "superseded" : null,
      ].filter(Boolean).map((t) => ` _(${t})_`).join("");
      const text = `### ${who}${at}${tags}\n\n${e.text ?? "_(text unavailable)_"}`;
      return [text, ...toolBlocks(e)].join("\n\n");
    }
    case "tool_calls":
      return [`**Tool calls${at}**`, ...toolBlocks(e)].join("\n\n");
    case "cut":
      return `---\n\n**⟲ Rollback${at}** — the messages it cut are superseded` +
        (typeof d.kind === "string" ? ` (${d.kind})` : "") + `\n\n---`;
    case "command":
    case "command_batch":
      return [`**Command${at}**`, fenced(e.text ?? "", "sh"), ...outputBlocks(e)].join("\n\n");
    case "command_output": {
      const codes = Array.isArray(d.exit_codes) ? ` (exit ${d.exit_codes.join(", ")})` : "";
      return [`**Output${at}${codes}**`, ...outputBlocks(e)].join("\n\n");
    }
    default: {
      const label = e.kind.replaceAll("_", " ");
      const head = `**${label[0]!.toUpperCase()}${label.slice(1)}${at}**`;
      return e.text ? `${head}\n\n${e.text}` : head;
    }
  }
}

/** The whole export, secrets masked (see the module header). */
export function sessionMarkdown(
  s: SessionSummary,
  entries: readonly DetailEntry[],
  o: MarkdownOptions,
): string {
  const facts: [string, string | null][] = [
    ["Source", s.source],
    ["Session", code(s.session_id)],
    ["Project", s.project ? code(s.project) : null],
    ["Status", s.status],
    ["Started", iso(s.created_ms)],
    ["Updated", iso(s.updated_ms)],
    ["Messages", String(s.message_count)],
    ["Resume", code(s.resume_command)],
    ["Source files", s.source_gone ? "gone (served from the index)" : null],
  ];
  const head = [
    // The title first through maskTitle: its producer may have cut it inside a key, which
    // the whole-text masking below would not recognise (H2).
    `# ${maskTitle(sessionTitle(s))}`,
    facts.filter(([, v]) => v).map(([k, v]) => `- ${k}: ${v}`).join("\n"),
  ];
  if (entries.length < o.total) {
    const first = (entries[0]?.index ?? 0) + 1;
    head.push(`> Partial export: entries ${first}–${first + entries.length - 1} of ${o.total}.`);
  }
  return maskSecrets([...head, ...entries.map(entryMarkdown)].join("\n\n") + "\n").text;
}

/** A file name for the export: the masked title's safe characters plus the id's head. */
export function markdownFileName(s: Pick<SessionSummary, "name" | "title" | "session_id">): string {
  const slug = maskTitle(sessionTitle(s)).normalize("NFKD").replace(/[^\w.-]+/g, "-")
    .replace(/^-+|-+$/g, "")
    .slice(0, 60).toLowerCase();
  const id = s.session_id.replace(/[^\w-]/g, "").slice(0, 8);
  return `${slug || "session"}-${id}.md`;
}
