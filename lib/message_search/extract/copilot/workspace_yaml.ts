/**
 * Copilot's `workspace.yaml` (formats-more.md §3.5): flat `key: value` lines (`id, cwd,
 * git_root, repository, branch, summary, summary_count, created_at, updated_at`, `name`
 * in some versions). Only the title (`name`, else `summary`) and `cwd` are taken; they
 * are metadata, never prose. No YAML library: anything that is not a flat scalar line is
 * ignored, a quoted scalar is unquoted (JSON rules for double quotes, '' for single).
 * Read through the contained reader, capped; a missing or refused file is "no facts".
 */
import { readContained } from "../../../durable/mod.ts";

/** Largest workspace.yaml read (real ones are a few hundred bytes). */
export const WORKSPACE_YAML_MAX_BYTES = 64 * 1024;

/** What the extractor uses of a workspace.yaml. */
export interface WorkspaceFacts {
  title: string | null;
  cwd: string | null;
}

function unquote(v: string): string | null {
  if (v.startsWith('"')) {
    try {
      const s = JSON.parse(v);
      return typeof s === "string" ? s : null;
    } catch {
      // Not a JSON-compatible double-quoted scalar: not a fact we can trust.
      return null;
    }
  }
  if (v.startsWith("'")) return v.endsWith("'") ? v.slice(1, -1).replaceAll("''", "'") : null;
  return v;
}

/** Parses the flat scalar lines of a workspace.yaml. */
export function parseWorkspaceYaml(text: string): WorkspaceFacts {
  const kv = new Map<string, string>();
  for (const line of text.split(/\r?\n/)) {
    const m = /^([A-Za-z_][A-Za-z0-9_]*):[ \t]+(.+?)\s*$/.exec(line);
    if (!m) continue;
    const v = unquote(m[2]!);
    if (v !== null && v !== "" && !kv.has(m[1]!)) kv.set(m[1]!, v);
  }
  return { title: kv.get("name") ?? kv.get("summary") ?? null, cwd: kv.get("cwd") ?? null };
}

/** Reads `path` (a workspace.yaml), or no facts. */
export async function readWorkspaceYaml(path: string | null): Promise<WorkspaceFacts> {
  const none = { title: null, cwd: null };
  if (path === null) return none;
  try {
    const r = await readContained(path, {
      maxBytes: WORKSPACE_YAML_MAX_BYTES,
      overflow: "truncate",
    });
    if (!r.ok) return none;
    return parseWorkspaceYaml(new TextDecoder().decode(r.bytes));
  } catch (err) {
    // Missing or unreadable metadata never blocks the transcript itself.
    if (err instanceof Deno.errors.NotFound || err instanceof Deno.errors.PermissionDenied) {
      return none;
    }
    throw err;
  }
}
