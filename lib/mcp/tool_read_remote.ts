/**
 * read_session for a session of ANOTHER machine (`mcp --team`): its indexed prose read from
 * the team database (lib/team loadRemoteSession), shown exactly as a local read shows
 * prose — the same framing, the same masking and quoting (framing.ts quoteBlock), the same
 * output cap and entry-index paging — and marked remote. Only what the replica holds:
 * user and assistant messages; tool calls live in the other machine's files (said so when
 * include_tool_calls is asked). A locator (from a team search hit) centres the page on its
 * record: the session is scanned page by page for that record (REMOTE_PAGE_MAX records a
 * query), which is bounded by the session's size and only done when a locator is given.
 */
import { REMOTE_PAGE_MAX, type RemoteRecord, type RemoteSession } from "../team/mod.ts";
import { resumeCommand } from "../catalog/mod.ts";
import type { TeamBackend } from "./team_backend.ts";
import {
  field,
  OutputBudget,
  quoteBlock,
  quotedField,
  SUPERSEDED_NOTE,
  TEAM_FRAMING,
  titleField,
} from "./framing.ts";

/** What a remote read is asked. */
export interface RemoteReadArgs {
  machine: string;
  session_key: string;
  locator?: string;
  offset?: number;
  limit: number;
  include_tool_calls?: boolean;
}

/** The index of the record whose locator is `locator`, or null. */
async function locate(team: TeamBackend, a: RemoteReadArgs): Promise<number | null> {
  for (let offset = 0;; offset += REMOTE_PAGE_MAX) {
    const page = await team.readRemote({
      machine: a.machine,
      sessionKey: a.session_key,
      offset,
      limit: REMOTE_PAGE_MAX,
    });
    const i = page.records.findIndex((r) => r.locator === a.locator);
    if (i >= 0) return offset + i;
    if (offset + page.records.length >= page.total || page.records.length === 0) return null;
  }
}

/** Runs a remote read_session; the result text. */
export async function readRemoteSession(
  team: TeamBackend,
  a: RemoteReadArgs,
  o: { maxBytes: number },
): Promise<string> {
  const anchor = a.locator !== undefined && a.offset === undefined ? await locate(team, a) : null;
  const offset = a.offset ?? (anchor === null ? 0 : Math.max(anchor - Math.floor(a.limit / 2), 0));
  const d: RemoteSession = await team.readRemote({
    machine: a.machine,
    sessionKey: a.session_key,
    offset,
    limit: Math.min(a.limit, REMOTE_PAGE_MAX),
  });
  const s = d.meta;
  const out = new OutputBudget(o.maxBytes);
  out.add(TEAM_FRAMING);
  // Every transcript-derived value — the machine's name included: another member chose it —
  // sits on a quoted line (H4).
  out.add(
    `Session on another machine (REMOTE: read from the team database; ${s.source}, ` +
      `${d.total} messages${s.source_gone ? ", its source files are gone" : ""}):`,
  );
  out.add(quotedField("machine", field(s.machine)));
  out.add(quotedField("title", titleField(s.title) || "(untitled session)"));
  out.add(quotedField("session", field(s.session_key)));
  out.add(quotedField("project", field(s.project) || "-"));
  out.add(quotedField(
    "resume (on that machine)",
    field(resumeCommand({
      source: s.source,
      sessionId: s.session_id,
      project: s.project,
      files: [],
    })) || "(unknown)",
  ));
  if (a.locator !== undefined && a.offset === undefined && anchor === null) {
    out.add("(the locator could not be found in this session now; page shown from its start)");
  }
  const last = d.offset + d.records.length - 1;
  out.add(
    `entries ${d.offset}–${last} of ${d.total} (indexed prose from the team database` +
      `${a.include_tool_calls ? "; tool calls are not in the team database" : ""}):`,
  );
  let next: number | null = d.offset + d.records.length < d.total
    ? d.offset + d.records.length
    : null;
  let shown = 0;
  for (const [i, r] of d.records.entries()) {
    const index = d.offset + i;
    const block = recordBlock(r, { index, anchor });
    const fit = out.addEntry(block, shown === 0);
    if (fit === "added") {
      shown++;
      continue;
    }
    next = fit === "full" ? index : index + 1 < d.total ? index + 1 : null;
    break;
  }
  const notes: string[] = [];
  if (next !== null) {
    notes.push(
      `${out.cut ? "Output cap reached; continue" : "More entries: continue"} with read_session ` +
        `(the machine and session quoted above) offset=${next}`,
    );
  } else notes.push("End of session.");
  if (d.offset > 0) notes.push(`Earlier entries: offset=${Math.max(d.offset - a.limit, 0)}`);
  return out.text(notes.join("\n"));
}

/** One record as text. */
function recordBlock(r: RemoteRecord, o: { index: number; anchor: number | null }): string {
  const flags = [r.subagent ? "subagent" : "", r.truncated ? "message truncated in index" : ""]
    .filter(Boolean);
  const lines = [
    `\n[${o.index}] ${new Date(r.ts_ms).toISOString()} ${r.role}${
      flags.length ? ` (${flags.join(", ")})` : ""
    }${o.index === o.anchor ? "  <- located hit" : ""}`,
  ];
  if (r.superseded) lines.push(`${SUPERSEDED_NOTE}.`);
  lines.push(quoteBlock(r.text));
  return lines.join("\n");
}
