/**
 * Where each source's transcripts are looked for, in words a person can act on: `serve`
 * prints one line per source at start, and the dashboard shows the list when the index
 * is empty. Per source: the directory looked at (the first transcript directory that
 * exists, else the main one), whether it exists, the variable that points the source
 * elsewhere, and whether home-only mode leaves this machine-global store out. Only the
 * main (configured) home of each source is described: leased, staged and persisted homes
 * are the program's own and need no pointing. Cheap (a few stat calls), no reads. A store
 * left out by home-only mode is not even stat'ed: the locked profile grants no access to
 * it then. A directory that cannot be stat'ed for want of permission is "unreadable";
 * other errors propagate.
 */
import { join } from "node:path";
import { ENV_INTENDANT_HOME, type ResolvedConfig } from "../config.ts";
import { type ExternalSource } from "./roots.ts";
import { TRANSCRIPT_SUBDIRS } from "./lease.ts";
import { type Source, SOURCES } from "./record.ts";
import { type HomeRule, SOURCE_HOME_RULES } from "../source_homes.ts";

/** One source's configured location. */
export interface SourceLocation {
  source: Source;
  /** The directory looked at. */
  path: string;
  /**
   * found: the directory exists; absent: it does not; unreadable: no permission to look;
   * skipped: home-only mode leaves this machine-global store out of every sweep.
   */
  state: "found" | "absent" | "unreadable" | "skipped";
  /**
   * The environment variable that points this source elsewhere (HOME for a source no
   * variable of its own moves: Factory Droid reads `~/.factory` only).
   */
  env: string;
  /** Whether the path came from that variable (false: the default under HOME). */
  explicit: boolean;
}

/** The external sources in SOURCES order (the configuration resolves a home for each). */
const EXTERNAL = SOURCES.filter((s): s is ExternalSource => s !== "intendant");

async function look(path: string): Promise<"found" | "absent" | "unreadable"> {
  try {
    // stat, not lstat: a sweep lists a symlinked home's directory like a real one.
    return (await Deno.stat(path)).isDirectory ? "found" : "absent";
  } catch (err) {
    if (err instanceof Deno.errors.NotFound || err instanceof Deno.errors.NotADirectory) {
      return "absent";
    }
    if (err instanceof Deno.errors.PermissionDenied || err instanceof Deno.errors.NotCapable) {
      return "unreadable";
    }
    throw err;
  }
}

/** Every source, in sweep order (intendant first). */
export async function sourceLocations(cfg: ResolvedConfig): Promise<SourceLocation[]> {
  const out: SourceLocation[] = [{
    source: "intendant",
    path: cfg.logsDir,
    state: await look(cfg.logsDir),
    env: ENV_INTENDANT_HOME,
    explicit: cfg.stateRoot !== join(cfg.home, ".intendant"),
  }];
  for (const source of EXTERNAL) {
    const sh = cfg.sourceHomes[source];
    const home = sh.homes[0]!;
    // What the profile grants is what is looked at: the rule's read roots ("" is the home
    // itself, where OpenCode's databases sit), else the transcript subdirectories.
    const rule: HomeRule = SOURCE_HOME_RULES[source];
    const subs = rule.readRoots ?? TRANSCRIPT_SUBDIRS[source];
    const dirs = subs.map((d) => (d ? join(home.path, d) : home.path));
    const base = { source, env: sh.env ?? "HOME", explicit: home.explicit };
    if (cfg.messageSearch.homeOnly) {
      out.push({ ...base, path: dirs[0]!, state: "skipped" });
      continue;
    }
    // The first transcript directory that exists, else the first that says why not.
    let best: SourceLocation = { ...base, path: dirs[0]!, state: await look(dirs[0]!) };
    for (const d of dirs.slice(1)) {
      if (best.state === "found") break;
      const state = await look(d);
      if (state === "found") best = { ...base, path: d, state };
    }
    out.push(best);
  }
  return out;
}
