/**
 * The benchmark corpus: homes for every source in their exact on-disk formats,
 * deterministic from (preset, seed), dated inside the retention window relative to the
 * generation time. `ensureCorpus` reuses a corpus already on disk when its stamp matches
 * (same generator version, preset, seed, every file and database at its recorded size,
 * generated less than 12 h ago so every date is still inside the 14-day window), else
 * rewrites it.
 * Layout under `dir` (each home where the tool puts it under its env override; the bench
 * sets the overrides, bench/daemon.ts `userEnv`):
 *   state/ (INTENDANT_HOME; logs/ holds native sessions), codex/ (CODEX_HOME), claude/
 *   (CLAUDE_CONFIG_DIR; projects/), kimi/ (KIMI_CODE_HOME), pi/ (PI_CODING_AGENT_DIR),
 *   gemini/.gemini/ (GEMINI_CLI_HOME=gemini/), qwen/.qwen/ (QWEN_RUNTIME_DIR),
 *   copilot/.copilot/ (COPILOT_HOME), cursor/.cursor/ (CURSOR_CONFIG_DIR),
 *   home/.factory/ (Droid has no override: HOME=home/), share/opencode/opencode.db
 *   (XDG_DATA_HOME=share/), goose/data/sessions/sessions.db (GOOSE_PATH_ROOT=goose/),
 *   corpus.json.
 * Invariant: `bySource[s].messages` is exactly the prose records a full index of source
 * `s` holds (superseded ones included); the backfill phase checks it.
 */
import { join } from "node:path";
import type { Source } from "../../lib/message_search/mod.ts";
import { planSessions, type Preset, scriptSession, type SessionPlan } from "./plan.ts";
import { ProseGen, ToolOutputs } from "./text.ts";
import { type AppendSpec, touch, type WrittenSession } from "./types.ts";
import { writeClaude } from "./write_claude.ts";
import { writeCodex } from "./write_codex.ts";
import { writeCopilot } from "./write_copilot.ts";
import { writeCursor } from "./write_cursor.ts";
import { writeDroid } from "./write_droid.ts";
import { writeGemini } from "./write_gemini.ts";
import { writeGoose } from "./write_goose.ts";
import { writeIntendant } from "./write_intendant.ts";
import { writeKimi } from "./write_kimi.ts";
import { writeOpenCode } from "./write_opencode.ts";
import { writePi } from "./write_pi.ts";
import { writeQwen } from "./write_qwen.ts";

export { NEEDLES } from "./text.ts";
export { PRESETS, scaled } from "./plan.ts";
export type { Preset } from "./plan.ts";
export { appender } from "./append.ts";
export type { AppendSpec, WrittenSession } from "./types.ts";

/**
 * Bumped whenever the generator's output for the same (preset, seed) changes.
 * 3: twelve sources (issue 17), new homes, databases, per-source counts.
 */
export const GENERATOR_VERSION = 4;
/** A corpus older than this is regenerated (its dates would drift out of the window). */
const MAX_AGE_MS = 12 * 3_600_000;

/** The homes of a corpus (each source's home is what its extractor is given). */
export interface CorpusHomes {
  stateRoot: string;
  logsDir: string;
  /** HOME of the corpus's user (holds `.factory`, Droid's only location). */
  userHome: string;
  codex: string;
  claude: string;
  claudeProjects: string;
  kimi: string;
  pi: string;
  /** GEMINI_CLI_HOME (Gemini appends `.gemini`), and the `.gemini` folder itself. */
  geminiCliHome: string;
  gemini: string;
  /** QWEN_RUNTIME_DIR: the runtime base holding `projects/`. */
  qwen: string;
  /** COPILOT_HOME: holds `session-state/`. */
  copilot: string;
  /** CURSOR_CONFIG_DIR: holds `projects/`. */
  cursor: string;
  /** `~/.factory` under userHome. */
  droid: string;
  /** XDG_DATA_HOME, and OpenCode's data dir `<XDG_DATA_HOME>/opencode`. */
  xdgData: string;
  opencode: string;
  /** GOOSE_PATH_ROOT, and Goose's data dir `<root>/data` (holds `sessions/`). */
  gooseRoot: string;
  goose: string;
}

/** What a corpus holds of one source. */
export interface SourceTally {
  sessions: number;
  /** Prose messages: what the index must hold for the source. */
  messages: number;
  bytes: number;
  files: number;
}

/** corpus.json: what was written. */
export interface Corpus {
  version: number;
  preset: Preset;
  seed: number;
  nowMs: number;
  dir: string;
  homes: CorpusHomes;
  sessions: WrittenSession[];
  /** Shared databases (OpenCode, Goose) at their final size. */
  databases: { source: Source; path: string; bytes: number }[];
  messages: number;
  bytes: number;
  files: number;
  bySource: Partial<Record<Source, SourceTally>>;
  planted: ProseGen["planted"];
  /** Needles planted per source (generated text; a Droid fork indexes its prefix twice). */
  plantedBySource: Partial<Record<Source, ProseGen["planted"]>>;
  generatedInMs: number;
}

/** Where each source's home lives under `dir`. */
export function homesOf(dir: string): CorpusHomes {
  return {
    stateRoot: join(dir, "state"),
    logsDir: join(dir, "state", "logs"),
    userHome: join(dir, "home"),
    codex: join(dir, "codex"),
    claude: join(dir, "claude"),
    claudeProjects: join(dir, "claude", "projects"),
    kimi: join(dir, "kimi"),
    pi: join(dir, "pi"),
    geminiCliHome: join(dir, "gemini"),
    gemini: join(dir, "gemini", ".gemini"),
    qwen: join(dir, "qwen", ".qwen"),
    copilot: join(dir, "copilot", ".copilot"),
    cursor: join(dir, "cursor", ".cursor"),
    droid: join(dir, "home", ".factory"),
    xdgData: join(dir, "share"),
    opencode: join(dir, "share", "opencode"),
    gooseRoot: join(dir, "goose"),
    goose: join(dir, "goose", "data"),
  };
}

/**
 * The homes a scan of the raw corpus reads (the ripgrep baseline): every source's,
 * where its transcripts are.
 */
export function scanRoots(h: CorpusHomes): string[] {
  return [
    h.logsDir,
    h.codex,
    h.claude,
    h.kimi,
    h.pi,
    h.gemini,
    h.qwen,
    h.copilot,
    h.cursor,
    h.droid,
    h.opencode,
    h.goose,
  ];
}

/**
 * Largest tool output per source (Kimi refuses records over 2 MiB, fail-closed; OpenCode
 * and Goose keep every session in one database, kept to a realistic size).
 */
const TOOL_CAP: Partial<Record<Source, number>> = {
  "claude-code": 1 << 20,
  codex: 1 << 20,
  pi: 1 << 20,
  kimi: 512 << 10,
  intendant: 1 << 20,
  gemini: 1 << 20,
  qwen: 1 << 20,
  copilot: 1 << 20,
  cursor: 1 << 20,
  droid: 1 << 20,
  opencode: 256 << 10,
  goose: 256 << 10,
};

/** The session the incremental figures append to: the largest one that can take appends. */
export function appendTarget(c: Corpus): WrittenSession & { append: AppendSpec } {
  type Appendable = WrittenSession & { append: AppendSpec };
  const able = c.sessions.filter((s): s is Appendable => s.append !== undefined);
  if (able.length === 0) throw new RangeError("The corpus has no session that takes appends");
  return able.reduce((a, b) => (b.bytes > a.bytes ? b : a));
}

/** Options for {@link ensureCorpus}. */
export interface CorpusOptions {
  dir: string;
  preset: Preset;
  seed: number;
  /** Progress lines (stderr in the CLI). */
  log?: (line: string) => void;
  /** @default Date.now */
  now?: () => number;
}

/** The corpus at `o.dir`, reused when still valid, else (re)generated. */
export async function ensureCorpus(o: CorpusOptions): Promise<Corpus> {
  const now = (o.now ?? Date.now)();
  const existing = await readCorpus(o.dir);
  if (
    existing && existing.version === GENERATOR_VERSION && existing.seed === o.seed &&
    JSON.stringify(existing.preset) === JSON.stringify(o.preset) &&
    now - existing.nowMs < MAX_AGE_MS && await intact(existing)
  ) {
    o.log?.(`corpus: reusing ${o.dir} (${existing.messages} messages)`);
    return existing;
  }
  return await generateCorpus(o, now);
}

async function readCorpus(dir: string): Promise<Corpus | null> {
  try {
    return JSON.parse(await Deno.readTextFile(join(dir, "corpus.json"))) as Corpus;
  } catch (err) {
    if (err instanceof Deno.errors.NotFound || err instanceof SyntaxError) return null;
    throw err;
  }
}

async function intact(c: Corpus): Promise<boolean> {
  for (const d of c.databases ?? []) {
    try {
      if ((await Deno.stat(d.path)).size !== d.bytes) return false;
    } catch (err) {
      if (err instanceof Deno.errors.NotFound) return false;
      throw err;
    }
  }
  for (const s of c.sessions) {
    if (s.db !== undefined) continue; // checked with its database above
    let size = 0;
    for (const f of s.files) {
      try {
        size += (await Deno.stat(f)).size;
      } catch (err) {
        if (err instanceof Deno.errors.NotFound) return false;
        throw err;
      }
    }
    if (size !== s.bytes) return false;
  }
  return true;
}

/** Writes a fresh corpus (removing whatever `o.dir` held). */
export async function generateCorpus(o: CorpusOptions, nowMs: number): Promise<Corpus> {
  const t0 = performance.now();
  await Deno.remove(o.dir, { recursive: true }).catch((err) => {
    if (!(err instanceof Deno.errors.NotFound)) throw err;
  });
  const homes = homesOf(o.dir);
  const sources = new Set<Source>([
    ...(Object.keys(o.preset.shares) as Source[]),
    ...o.preset.huge.map((h) => h.source),
  ]);
  for (const d of [homes.logsDir, homes.codex, homes.claudeProjects, homes.kimi, homes.pi]) {
    await Deno.mkdir(d, { recursive: true });
  }
  const plans = planSessions(o.preset, o.seed, nowMs);
  const prose = new ProseGen(o.seed, o.preset.messages);
  const tools = new ToolOutputs(prose, o.seed);
  const sessions: WrittenSession[] = [];
  const plantedBySource: Partial<Record<Source, ProseGen["planted"]>> = {};
  /** Per database: the newest time a session in it ends (its mtime once written). */
  const dbEnds = new Map<string, { source: Source; ms: number }>();
  let lastLog = performance.now();
  for (const plan of plans) {
    const first = !(plan.source in plantedBySource);
    const before = { ...prose.planted };
    if (first && o.preset.needlesPerSource) prose.oweAll();
    const turns = scriptSession(plan, prose, tools, { toolCap: TOOL_CAP[plan.source] ?? 1 << 20 });
    const written = await writeSession(homes, plan, turns, prose);
    sessions.push(...written);
    const tally = plantedBySource[plan.source] ??= zeroPlanted();
    for (const k of Object.keys(before) as (keyof typeof before)[]) {
      tally[k] += prose.planted[k] - before[k];
    }
    for (const w of written) {
      if (w.db === undefined) continue;
      const e = dbEnds.get(w.db);
      if (!e || e.ms < plan.endMs) dbEnds.set(w.db, { source: w.source, ms: plan.endMs });
    }
    if (performance.now() - lastLog > 5000) {
      lastLog = performance.now();
      o.log?.(`corpus: ${sessions.length}/${plans.length} sessions written`);
    }
  }
  const databases: Corpus["databases"] = [];
  for (const [path, e] of dbEnds) {
    await touch(path, e.ms);
    databases.push({ source: e.source, path, bytes: (await Deno.stat(path)).size });
  }
  const bySource: Partial<Record<Source, SourceTally>> = {};
  for (const src of sources) bySource[src] = { sessions: 0, messages: 0, bytes: 0, files: 0 };
  for (const s of sessions) {
    const t = bySource[s.source] ??= { sessions: 0, messages: 0, bytes: 0, files: 0 };
    t.sessions++;
    t.messages += s.messages;
    t.bytes += s.bytes;
    t.files += s.files.length;
  }
  for (const d of databases) bySource[d.source]!.files++;
  const corpus: Corpus = {
    version: GENERATOR_VERSION,
    preset: o.preset,
    seed: o.seed,
    nowMs,
    dir: o.dir,
    homes,
    sessions,
    databases,
    messages: sessions.reduce((n, s) => n + s.messages, 0),
    bytes: sessions.reduce((n, s) => n + s.bytes, 0),
    files: sessions.reduce((n, s) => n + s.files.length, 0) + databases.length,
    bySource,
    planted: prose.planted,
    plantedBySource,
    generatedInMs: Math.round(performance.now() - t0),
  };
  await Deno.writeTextFile(join(o.dir, "corpus.json"), JSON.stringify(corpus));
  o.log?.(`corpus: wrote ${corpus.messages} messages in ${corpus.generatedInMs} ms`);
  return corpus;
}

function zeroPlanted(): ProseGen["planted"] {
  return { rare: 0, scarce: 0, mid: 0, phrase: 0, and: 0, accented: 0, cjk: 0 };
}

async function writeSession(
  homes: CorpusHomes,
  plan: SessionPlan,
  turns: ReturnType<typeof scriptSession>,
  prose: ProseGen,
): Promise<WrittenSession[]> {
  switch (plan.source) {
    case "codex":
      return [await writeCodex(homes.codex, plan, turns)];
    case "claude-code":
      return [await writeClaude(homes.claudeProjects, plan, turns)];
    case "pi":
      return [await writePi(homes.pi, plan, turns)];
    case "kimi":
      return [await writeKimi(homes.kimi, plan, turns)];
    case "intendant":
      return [await writeIntendant(homes.logsDir, plan, turns)];
    case "gemini":
      return [await writeGemini(homes.gemini, plan, turns)];
    case "qwen":
      return [await writeQwen(homes.qwen, plan, turns)];
    case "copilot":
      return [await writeCopilot(homes.copilot, plan, turns, prose)];
    case "cursor":
      return [await writeCursor(homes.cursor, plan, turns)];
    case "droid":
      return await writeDroid(homes.droid, plan, turns, prose);
    case "opencode":
      return [await writeOpenCode(homes.opencode, plan, turns)];
    case "goose":
      return [await writeGoose(homes.goose, plan, turns)];
  }
}
