/**
 * The benchmark corpus: homes for all five sources in their exact on-disk formats,
 * deterministic from (preset, seed), dated inside the retention window relative to the
 * generation time. `ensureCorpus` reuses a corpus already on disk when its stamp matches
 * (same generator version, preset, seed, every file at its recorded size, generated less
 * than 12 h ago so every date is still inside the 14-day window), else rewrites it.
 * Layout under `dir`: state/ (INTENDANT_HOME; logs/ holds native sessions), codex/,
 * claude/ (CLAUDE_CONFIG_DIR; projects/), kimi/, pi/ (PI_CODING_AGENT_DIR), corpus.json.
 */
import { join } from "node:path";
import type { Source } from "../../lib/message_search/mod.ts";
import { planSessions, type Preset, scriptSession, type SessionPlan } from "./plan.ts";
import { ProseGen, ToolOutputs } from "./text.ts";
import type { WrittenSession } from "./types.ts";
import { writeClaude } from "./write_claude.ts";
import { writeCodex } from "./write_codex.ts";
import { writeIntendant } from "./write_intendant.ts";
import { writeKimi } from "./write_kimi.ts";
import { writePi } from "./write_pi.ts";

export { NEEDLES } from "./text.ts";
export { PRESETS, scaled } from "./plan.ts";
export type { Preset } from "./plan.ts";
export { appender } from "./append.ts";
export type { AppendSpec, WrittenSession } from "./types.ts";

/** Bumped whenever the generator's output for the same (preset, seed) changes. */
export const GENERATOR_VERSION = 2;
/** A corpus older than this is regenerated (its dates would drift out of the window). */
const MAX_AGE_MS = 12 * 3_600_000;

/** The homes of a corpus. */
export interface CorpusHomes {
  stateRoot: string;
  logsDir: string;
  codex: string;
  claude: string;
  claudeProjects: string;
  kimi: string;
  pi: string;
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
  messages: number;
  bytes: number;
  files: number;
  planted: ProseGen["planted"];
  generatedInMs: number;
}

/** Where each source's home lives under `dir`. */
export function homesOf(dir: string): CorpusHomes {
  return {
    stateRoot: join(dir, "state"),
    logsDir: join(dir, "state", "logs"),
    codex: join(dir, "codex"),
    claude: join(dir, "claude"),
    claudeProjects: join(dir, "claude", "projects"),
    kimi: join(dir, "kimi"),
    pi: join(dir, "pi"),
  };
}

/** Largest tool output per source (Kimi refuses records over 2 MiB, fail-closed). */
const TOOL_CAP: Partial<Record<Source, number>> = {
  "claude-code": 1 << 20,
  codex: 1 << 20,
  pi: 1 << 20,
  kimi: 512 << 10,
  intendant: 1 << 20,
};

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
  for (const s of c.sessions) {
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
  for (const d of [homes.logsDir, homes.codex, homes.claudeProjects, homes.kimi, homes.pi]) {
    await Deno.mkdir(d, { recursive: true });
  }
  const plans = planSessions(o.preset, o.seed, nowMs);
  const prose = new ProseGen(o.seed, o.preset.messages);
  const tools = new ToolOutputs(prose, o.seed);
  const sessions: WrittenSession[] = [];
  let lastLog = performance.now();
  for (const plan of plans) {
    const turns = scriptSession(plan, prose, tools, { toolCap: TOOL_CAP[plan.source] ?? 1 << 20 });
    sessions.push(await writeSession(homes, plan, turns));
    if (performance.now() - lastLog > 5000) {
      lastLog = performance.now();
      o.log?.(`corpus: ${sessions.length}/${plans.length} sessions written`);
    }
  }
  const corpus: Corpus = {
    version: GENERATOR_VERSION,
    preset: o.preset,
    seed: o.seed,
    nowMs,
    dir: o.dir,
    homes,
    sessions,
    messages: sessions.reduce((n, s) => n + s.messages, 0),
    bytes: sessions.reduce((n, s) => n + s.bytes, 0),
    files: sessions.reduce((n, s) => n + s.files.length, 0),
    planted: prose.planted,
    generatedInMs: Math.round(performance.now() - t0),
  };
  await Deno.writeTextFile(join(o.dir, "corpus.json"), JSON.stringify(corpus));
  o.log?.(`corpus: wrote ${corpus.messages} messages in ${corpus.generatedInMs} ms`);
  return corpus;
}

function writeSession(
  homes: CorpusHomes,
  plan: SessionPlan,
  turns: ReturnType<typeof scriptSession>,
): Promise<WrittenSession> {
  switch (plan.source) {
    case "codex":
      return writeCodex(homes.codex, plan, turns);
    case "claude-code":
      return writeClaude(homes.claudeProjects, plan, turns);
    case "pi":
      return writePi(homes.pi, plan, turns);
    case "kimi":
      return writeKimi(homes.kimi, plan, turns);
    case "intendant":
      return writeIntendant(homes.logsDir, plan, turns);
    default:
      // A source without a corpus writer yet is given no share (plan.ts).
      throw new RangeError(`No corpus writer for source "${plan.source}"`);
  }
}
