/**
 * Which directories a sweep reads, resolved from configuration (paths only; the
 * environment was read by main.ts). Default mode sweeps the machine-global agent stores
 * (a Codex or Claude conversation belongs to the machine, not to one daemon home), the
 * leased-active homes, the staged lease remnants and per-session backend homes persisted
 * under the logs root. Home-only mode (INTENDANT_MESSAGE_SEARCH_DAEMON_HOME_ONLY) drops the
 * machine-global stores AND any persisted per-session home at or inside one of them (a
 * session launched without an explicit home persists the global default, and re-adding it
 * would reopen the hole); explicit non-default homes are swept wherever they live.
 * The switch gates root assembly, not query-time filtering.
 */
import { join, resolve } from "node:path";
import { z } from "zod";
import type { ResolvedConfig } from "../config.ts";
import { isInside, readContained } from "../durable/mod.ts";
import { normalizeSource, SESSION_ID_GRAMMAR } from "../session_log/mod.ts";
import type { Source } from "./record.ts";
import { SQLITE_SNAPSHOT_DIR } from "./extractor_set.ts";

/** External sources and where their transcripts live under a home. */
export type ExternalSource = Exclude<Source, "intendant">;

/** One home of one source, and where it came from. */
export interface SourceHome {
  source: ExternalSource;
  path: string;
  origin: "global" | "leased" | "staged" | "persisted";
  /** For staged homes: the staging entry directory to drain once published. */
  stagingEntry?: string;
}

/** Everything a sweep reads. */
export interface SourceRoots {
  logsDir: string;
  homes: SourceHome[];
  /**
   * Files a variable names, per source (OPENCODE_DB), absolute. Machine-global like the
   * default homes: absent in home-only mode.
   */
  files?: Partial<Record<ExternalSource, string[]>>;
  /**
   * Where SQLite sources put their private snapshot copies (inside the state root).
   * @default `<logsDir>/../cache/message_search/sqlite-snapshots`
   */
  snapshotDir?: string;
}

export const LEASED_ACTIVE_DIR = "leased-active";
export const STAGING_DIR = "staging";

/** `<cacheRoot>/leased-active/<lease>.json` */
export const LeaseRecordSchema = z.object({
  source: z.string(),
  home: z.string(),
  lease_id: z.string().optional(),
  created_at_ms: z.number().optional(),
});

/** `<cacheRoot>/staging/<entry>/lease.json`, beside the renamed transcript subdirectories. */
export const StagingRecordSchema = z.object({
  source: z.string(),
  lease_id: z.string().optional(),
});

/** Resolves the roots of one sweep. Reads only the state root's own small JSON files. */
export async function resolveSourceRoots(cfg: ResolvedConfig): Promise<SourceRoots> {
  const homes: SourceHome[] = [];
  // The machine-global homes of every source (a legacy home, e.g. Copilot's old
  // $XDG_CONFIG_HOME/.copilot, after the main one).
  const globals = Object.entries(cfg.sourceHomes).map(([source, sh]) => ({
    source: source as ExternalSource,
    paths: sh.homes.map((h) => h.path),
    files: sh.files.map((f) => f.path),
  }));
  const homeOnly = cfg.messageSearch.homeOnly;
  const files: Partial<Record<ExternalSource, string[]>> = {};
  if (!homeOnly) {
    for (const g of globals) {
      for (const path of g.paths) homes.push({ source: g.source, path, origin: "global" });
      if (g.files.length > 0) files[g.source] = g.files;
    }
  }
  for (
    const rec of await readJsonDir(
      join(cfg.messageSearch.cacheRoot, LEASED_ACTIVE_DIR),
      LeaseRecordSchema,
    )
  ) {
    const source = externalSource(rec.value.source);
    if (source) homes.push({ source, path: resolve(rec.value.home), origin: "leased" });
  }
  for (const entry of await listDirs(join(cfg.messageSearch.cacheRoot, STAGING_DIR))) {
    const rec = await readJson(join(entry, "lease.json"), StagingRecordSchema);
    const source = rec ? externalSource(rec.source) : null;
    if (source) homes.push({ source, path: entry, origin: "staged", stagingEntry: entry });
  }
  for (const p of await persistedHomes(cfg.logsDir)) {
    const globalHomes = globals.find((g) => g.source === p.source)?.paths ?? [];
    // The carve-out: in home-only mode, a persisted home at or inside the machine-global
    // store is the global store by another name.
    if (homeOnly && globalHomes.some((g) => isInside(resolve(p.path), resolve(g)))) continue;
    homes.push({ source: p.source, path: resolve(p.path), origin: "persisted" });
  }
  return {
    logsDir: cfg.logsDir,
    homes: dedupeHomes(homes),
    files,
    snapshotDir: join(cfg.messageSearch.cacheRoot, SQLITE_SNAPSHOT_DIR),
  };
}

function externalSource(raw: string): ExternalSource | null {
  const s = normalizeSource(raw);
  return s && s !== "intendant" ? s : null;
}

function dedupeHomes(homes: SourceHome[]): SourceHome[] {
  const seen = new Set<string>();
  return homes.filter((h) => {
    const k = `${h.source}\0${resolve(h.path)}`;
    if (seen.has(k)) return false;
    seen.add(k);
    return true;
  });
}

const AgentConfigHomeSchema = z.object({ backend: z.string(), backend_home: z.string() });

/** Backend homes recorded by sessions (`session_agent_config.json` {backend, backend_home}). */
async function persistedHomes(
  logsDir: string,
): Promise<{ source: ExternalSource; path: string }[]> {
  const out: { source: ExternalSource; path: string }[] = [];
  for (const dir of await listDirs(logsDir)) {
    if (!SESSION_ID_GRAMMAR.test(dir.split("/").at(-1) ?? "")) continue;
    const rec = await readJson(join(dir, "session_agent_config.json"), AgentConfigHomeSchema);
    const source = rec ? externalSource(rec.backend) : null;
    if (rec && source) out.push({ source, path: rec.backend_home });
  }
  return out;
}

async function listDirs(dir: string): Promise<string[]> {
  const out: string[] = [];
  try {
    for await (const e of Deno.readDir(dir)) if (e.isDirectory) out.push(join(dir, e.name));
  } catch (err) {
    if (err instanceof Deno.errors.NotFound || err instanceof Deno.errors.NotADirectory) return out;
    throw err;
  }
  return out.sort();
}

/** A registry or agent-config file is a few hundred bytes; larger is not one of ours. */
const REGISTRY_FILE_MAX_BYTES = 1024 * 1024;

/**
 * A small JSON file we wrote (a leased-active entry, a session's agent config), read
 * through the contained reader: a symlink (to /dev/zero, outside), FIFO, hard link,
 * oversized file or a swap after the lstat is ignored like a missing file, never followed,
 * waited on or read past the cap.
 */
async function readJson<T extends z.ZodType>(path: string, schema: T): Promise<z.infer<T> | null> {
  const read = await readContained(path, {
    maxBytes: REGISTRY_FILE_MAX_BYTES,
    hardlinks: "refuse",
  });
  if (!read.ok) return null;
  const text = new TextDecoder().decode(read.bytes);
  try {
    const r = schema.safeParse(JSON.parse(text));
    return r.success ? r.data : null;
  } catch {
    // A broken registry file is ignored, like a missing one.
    return null;
  }
}

async function readJsonDir<T extends z.ZodType>(
  dir: string,
  schema: T,
): Promise<{ name: string; value: z.infer<T> }[]> {
  const out: { name: string; value: z.infer<T> }[] = [];
  try {
    for await (const e of Deno.readDir(dir)) {
      if (!e.isFile || !e.name.endsWith(".json")) continue;
      const value = await readJson(join(dir, e.name), schema);
      if (value) out.push({ name: e.name, value });
    }
  } catch (err) {
    if (err instanceof Deno.errors.NotFound) return out;
    throw err;
  }
  return out.sort((a, b) => a.name.localeCompare(b.name));
}
