/**
 * The relevance suite's corpus (issue 27): every piece of work of relevance_works.ts told
 * over several messages of one target session, among distractors that share its words
 * piecewise, written in the real on-disk formats of eight sources through the bench
 * corpus writers (bench/corpus/write_*.ts, themselves built on the fixture writers of
 * tests/fixtures and tests/helpers/fixtures), and the questions that should find each
 * target. Deterministic from (preset, seed, nowMs): one seeded PRNG, no clock.
 * Sessions:
 *  - target:  one per work — the user's turns, the assistant's answers, a context turn
 *             with a fact about the system, generic turns ("ok, run the tests again");
 *  - cross:   the system of one work with the problem of ANOTHER (a kubernetes operator
 *             that leaks memory, a deadlock in the celery workers): each shares part of
 *             some target's vocabulary, never all of its details;
 *  - near:    a cross session whose assistant mentions another work's problem and system
 *             in passing ("it reminds me of the deadlock in the kubernetes operator");
 *  - generic: chores (README, dependency bumps) in the words every session uses.
 * Every session ends somewhere in the last 13 days, lasting minutes to hours; targets are
 * dated like the rest, so newest-first wins only by chance.
 * Invariants: `messages` is exactly the prose a full index holds, one entry per record
 * (relevance_test.ts checks it against the store); no source used rewinds prose away
 * (Gemini, Qwen, OpenCode and Droid writers do, at random: left out so a target's words
 * are never superseded); tool output and reasoning carry no question's words.
 */
import type { Source } from "../../lib/message_search/mod.ts";
import { type CorpusHomes, homesOf } from "../../bench/corpus/mod.ts";
import type { SessionPlan, Step, TurnPlan } from "../../bench/corpus/plan.ts";
import { Rng } from "../../bench/corpus/rng.ts";
import { ProseGen } from "../../bench/corpus/text.ts";
import type { WrittenSession } from "../../bench/corpus/types.ts";
import { writeClaude } from "../../bench/corpus/write_claude.ts";
import { writeCodex } from "../../bench/corpus/write_codex.ts";
import { writeCopilot } from "../../bench/corpus/write_copilot.ts";
import { writeCursor } from "../../bench/corpus/write_cursor.ts";
import { writeGoose } from "../../bench/corpus/write_goose.ts";
import { writeIntendant } from "../../bench/corpus/write_intendant.ts";
import { writeKimi } from "../../bench/corpus/write_kimi.ts";
import { writePi } from "../../bench/corpus/write_pi.ts";
import { hermeticEnv } from "./temp.ts";
import {
  GENERIC_ASSISTANT,
  GENERIC_TASKS,
  GENERIC_USER,
  REMARKS,
  type Work,
  WORKS,
} from "./relevance_works.ts";

/** A corpus size. */
export interface RelevancePreset {
  name: string;
  /** Sessions in all, targets included. */
  sessions: number;
  /** Works whose paraphrase is asked (the first ones of WORKS). */
  paraphrases: number;
  /** Near-miss sessions in all (dealt over the works in a shuffled order). */
  nearMisses: number;
  /** Share of the other distractors that are generic chores (the rest are crosses). */
  genericShare: number;
  /** Sources written, with their weight among the distractors. */
  sources: Partial<Record<Source, number>>;
}

/**
 * Weights: Claude Code and Codex hold most sessions on a real machine. Native sessions
 * are few: each costs ~100 ms to write (the session log's durable writes), the others 1–13.
 */
const SOURCES: Partial<Record<Source, number>> = {
  "claude-code": 12,
  codex: 12,
  pi: 4,
  kimi: 4,
  copilot: 4,
  cursor: 4,
  goose: 4,
  intendant: 1,
};

/** `ci` runs in the test suite (seconds); `full` in `deno task bench:relevance`. */
export const RELEVANCE_PRESETS: Record<"ci" | "full", RelevancePreset> = {
  ci: {
    name: "ci",
    sessions: 420,
    paraphrases: 12,
    nearMisses: 16,
    genericShare: 0.2,
    sources: SOURCES,
  },
  full: {
    name: "full",
    sessions: 2_000,
    paraphrases: WORKS.length,
    nearMisses: 3 * WORKS.length,
    genericShare: 0.25,
    sources: SOURCES,
  },
};

/** How a question is put. */
export type QuestionKind = "keyword" | "natural" | "paraphrase";
export const QUESTION_KINDS: readonly QuestionKind[] = ["keyword", "natural", "paraphrase"];

/** One question and the session it should find. */
export interface RelevanceQuestion {
  id: string;
  kind: QuestionKind;
  q: string;
  /** The target's session key as the index names it (`<source>:<session id>`). */
  target: string;
}

/** One prose message: what the index holds as one record. */
export interface CorpusMessage {
  key: string;
  role: "user" | "assistant";
  text: string;
}

/** One written session. */
export interface CorpusSession {
  key: string;
  source: Source;
  kind: "target" | "cross" | "near" | "generic";
  /** The work a target tells, or a near-miss mentions. */
  work: string | null;
  startMs: number;
  endMs: number;
  messages: number;
}

/** A written corpus. */
export interface RelevanceCorpus {
  preset: RelevancePreset;
  seed: number;
  nowMs: number;
  homes: CorpusHomes;
  sessions: CorpusSession[];
  messages: CorpusMessage[];
  questions: RelevanceQuestion[];
  /** Sessions per source. */
  bySource: Partial<Record<Source, number>>;
  generatedInMs: number;
}

/** One session before it is written. */
interface Script {
  kind: CorpusSession["kind"];
  work: Work | null;
  source: Source;
  project: string;
  turns: TurnPlan[];
}

const MINUTE = 60_000;
const PROJECTS = ["/home/dev/shop", "/home/dev/api", "/home/dev/web.app", "/home/dev/infra"];
const TOOL_OUTPUT = [
  "ok  42 passed, 0 failed (3.1s)",
  "Compiled successfully in 8.2s",
  "diff --git a/src/main.ts b/src/main.ts\n@@ -10,7 +10,7 @@",
  "no matches found",
  "exit status 0",
];
const COMMANDS = ["git status", "npm test", "rg -n TODO src", "git diff --stat", "ls -la"];
const THOUGHTS = ["Let me look at the relevant code first.", "I should confirm before editing."];

/** Writes the corpus of `preset` under `dir` (which must be empty or absent). */
export async function writeRelevanceCorpus(
  dir: string,
  o: { preset: RelevancePreset; seed?: number; nowMs?: number },
): Promise<RelevanceCorpus> {
  const { preset, seed = 27, nowMs = Date.now() } = o;
  const t0 = performance.now();
  const homes = homesOf(dir);
  for (const d of [homes.logsDir, homes.codex, homes.claudeProjects, homes.kimi, homes.pi]) {
    await Deno.mkdir(d, { recursive: true });
  }
  const scripts = planScripts(preset, new Rng(seed));
  // One ProseGen only for Copilot's abandoned-then-rewound turns, which leave no prose.
  const prose = new ProseGen(seed, 1_000);
  const rng = new Rng(seed ^ 0x7a11);
  const sessions: CorpusSession[] = [];
  const messages: CorpusMessage[] = [];
  const targetOf = new Map<string, string>();
  const bySource: Partial<Record<Source, number>> = {};
  for (let index = 0; index < scripts.length; index++) {
    const s = scripts[index]!;
    const endMs = nowMs - rng.range(10, 13 * 24 * 60) * MINUTE;
    const startMs = endMs - rng.range(5, 180) * MINUTE;
    const plan: SessionPlan = {
      index,
      source: s.source,
      messages: proseOf(s.turns).length,
      huge: false,
      project: s.project,
      startMs,
      endMs,
      seed: rng.u32(),
    };
    const w = await writeOne(homes, plan, s.turns, prose);
    for (const m of proseOf(s.turns)) messages.push({ key: w.key, ...m });
    sessions.push({
      key: w.key,
      source: s.source,
      kind: s.kind,
      work: s.work?.id ?? null,
      startMs,
      endMs,
      messages: plan.messages,
    });
    bySource[s.source] = (bySource[s.source] ?? 0) + 1;
    if (s.kind === "target") targetOf.set(s.work!.id, w.key);
  }
  return {
    preset,
    seed,
    nowMs,
    homes,
    sessions,
    messages,
    questions: questionsOf(preset, targetOf),
    bySource,
    generatedInMs: Math.round(performance.now() - t0),
  };
}

/**
 * The environment of a user whose homes are the corpus's (each tool's own override, as
 * bench/daemon.ts `userEnv` sets them), hermetic under `root`, every home swept.
 */
export function relevanceEnv(homes: CorpusHomes, root: string): Record<string, string> {
  return hermeticEnv(root, {
    HOME: homes.userHome,
    INTENDANT_HOME: homes.stateRoot,
    CODEX_HOME: homes.codex,
    CLAUDE_CONFIG_DIR: homes.claude,
    KIMI_CODE_HOME: homes.kimi,
    PI_CODING_AGENT_DIR: homes.pi,
    COPILOT_HOME: homes.copilot,
    CURSOR_CONFIG_DIR: homes.cursor,
    GOOSE_PATH_ROOT: homes.gooseRoot,
    INTENDANT_MESSAGE_SEARCH_DAEMON_HOME_ONLY: "no",
  });
}

/** The questions of `preset`: keyword and natural for every work, some paraphrases. */
function questionsOf(preset: RelevancePreset, targetOf: Map<string, string>) {
  const out: RelevanceQuestion[] = [];
  WORKS.forEach((w, i) => {
    const target = targetOf.get(w.id)!;
    out.push({ id: `${w.id}:keyword`, kind: "keyword", q: w.keyword, target });
    out.push({ id: `${w.id}:natural`, kind: "natural", q: w.question, target });
    if (i < preset.paraphrases) {
      out.push({ id: `${w.id}:paraphrase`, kind: "paraphrase", q: w.paraphrase, target });
    }
  });
  return out;
}

/** Every session's script, in a shuffled order (targets are not the first written). */
function planScripts(preset: RelevancePreset, rng: Rng): Script[] {
  const sources = Object.keys(preset.sources) as Source[];
  const weighted = sources.flatMap((s) => Array<Source>(preset.sources[s]!).fill(s));
  const scripts: Script[] = [];
  // Targets round-robin over the sources, so each format holds targets.
  WORKS.forEach((w, i) => scripts.push(targetScript(w, sources[i % sources.length]!, rng)));
  const order = shuffle([...WORKS], rng);
  for (let i = 0; i < preset.nearMisses; i++) {
    scripts.push(nearScript(order[i % order.length]!, rng.pick(weighted), rng));
  }
  const rest = preset.sessions - scripts.length;
  if (rest < 0) throw new RangeError(`Preset "${preset.name}" has fewer sessions than targets`);
  const generic = Math.round(rest * preset.genericShare);
  for (let i = 0; i < rest; i++) {
    const source = rng.pick(weighted);
    scripts.push(i < generic ? genericScript(source, rng) : crossScript(source, rng));
  }
  return shuffle(scripts, rng);
}

function targetScript(w: Work, source: Source, rng: Rng): Script {
  const [u0, u1] = w.user as [string, string];
  const [a0, a1, a2] = w.assistant as [string, string, string];
  const turns: TurnPlan[] = [turn(u0, answer(a0, rng), rng, true)];
  maybeGeneric(turns, rng, 0.4);
  turns.push(turn(u1, answer(a1, rng), rng));
  // A context turn: what the system is, in the words the cross sessions use too.
  if (rng.chance(0.6)) {
    turns.push(turn(rng.pick(CONTEXT_ASKS), answer(rng.pick(w.subject.facts), rng), rng));
  }
  turns.push(turn(rng.pick(GENERIC_USER), answer(a2, rng), rng));
  maybeGeneric(turns, rng, 0.5);
  return { kind: "target", work: w, source, project: w.subject.project, turns };
}

const CONTEXT_ASKS = [
  "Remind me how this part is set up?",
  "I don't know this code well, what does it do?",
  "Before we go on, can you summarize the setup?",
];

/**
 * A cross session: the subject of work `a`, the problem of another work `b` (neither of
 * them `avoid`), with `remark` said once by the assistant.
 */
function crossTurns(
  rng: Rng,
  o: { remark?: string; avoid?: Work } = {},
): { turns: TurnPlan[]; project: string } {
  const { remark, avoid } = o;
  let a = rng.pick(WORKS);
  while (a === avoid) a = rng.pick(WORKS);
  let b = rng.pick(WORKS);
  while (b === a || b === avoid) b = rng.pick(WORKS);
  const s = a.subject;
  const p = b.problem;
  let open = capitalize(rng.pick(p.opens).replace("{S}", rng.pick(s.names)));
  if (rng.chance(0.4)) open += " " + rng.pick(s.facts);
  const [f0, f1] = shuffle([...p.facts], rng) as [string, string];
  const turns: TurnPlan[] = [
    turn(open, answer(`${f0} ${rng.pick(GENERIC_ASSISTANT)}`, rng), rng, true),
  ];
  maybeGeneric(turns, rng, 0.4);
  turns.push(turn(rng.pick(GENERIC_USER), answer(`${f1} ${rng.pick(s.facts)}`, rng), rng));
  turns.push(turn(rng.pick(GENERIC_USER), answer(rng.pick(p.fixes), rng), rng));
  maybeGeneric(turns, rng, 0.5);
  if (remark !== undefined) {
    // The remark goes into one of the assistant's answers, beside its own text.
    const texts = turns.flatMap((t) => t.steps.filter((x) => x.kind === "text"));
    const at = rng.pick(texts) as { kind: "text"; text: string };
    at.text = `${remark} ${at.text}`;
  }
  return { turns, project: s.project };
}

function crossScript(source: Source, rng: Rng): Script {
  const { turns, project } = crossTurns(rng);
  return { kind: "cross", work: null, source, project, turns };
}

/** A cross session that names work `w`'s problem and system once, in passing. */
function nearScript(w: Work, source: Source, rng: Rng): Script {
  const remark = rng.pick(REMARKS)
    .replace("{P}", w.problem.names[0]!)
    .replace("{S}", w.subject.names[0]!);
  // Over neither w's subject nor its problem: a passing mention, not a second telling.
  const { turns, project } = crossTurns(rng, { remark, avoid: w });
  return { kind: "near", work: w, source, project, turns };
}

function genericScript(source: Source, rng: Rng): Script {
  const [ask, reply] = rng.pick(GENERIC_TASKS);
  const turns = [turn(ask, answer(reply, rng), rng, true)];
  const more = rng.range(1, 3);
  for (let i = 0; i < more; i++) maybeGeneric(turns, rng, 1);
  return { kind: "generic", work: null, source, project: rng.pick(PROJECTS), turns };
}

/** Appends a generic turn with probability `p`. */
function maybeGeneric(turns: TurnPlan[], rng: Rng, p: number): void {
  if (!rng.chance(p)) return;
  const n = rng.range(1, 3);
  const said = shuffle([...GENERIC_ASSISTANT], rng).slice(0, n).join(" ");
  turns.push(turn(rng.pick(GENERIC_USER), [said], rng));
}

/**
 * An answer around `core`: alone, or with generic sentences before and after, now and
 * then split into paragraphs or into two messages (one API turn with two texts).
 */
function answer(core: string, rng: Rng): string[] {
  const r = rng.next();
  if (r < 0.35) return [core];
  const pad = shuffle([...GENERIC_ASSISTANT], rng);
  if (r < 0.75) return [`${pad[0]} ${core}${rng.chance(0.5) ? ` ${pad[1]}` : ""}`];
  if (r < 0.9) {
    // A few paragraphs.
    return [`${pad[0]} ${pad[1]}\n\n${core}\n\n${pad.slice(2, 2 + rng.range(1, 4)).join(" ")}`];
  }
  return [pad[0]!, core];
}

/** One turn: the user's text, then the assistant's texts with tools and reasoning between. */
function turn(user: string, texts: string[], rng: Rng, first = false): TurnPlan {
  const steps: Step[] = [];
  for (const text of texts) {
    if (rng.chance(0.25)) steps.push({ kind: "think", text: rng.pick(THOUGHTS) });
    if (rng.chance(first ? 0.7 : 0.35)) {
      steps.push({
        kind: "tool",
        name: "Bash",
        cmd: rng.pick(COMMANDS),
        output: rng.pick(TOOL_OUTPUT),
      });
    }
    steps.push({ kind: "text", text });
  }
  return { user, steps };
}

/** The prose records a script yields, in order. */
function proseOf(turns: TurnPlan[]): Omit<CorpusMessage, "key">[] {
  const out: Omit<CorpusMessage, "key">[] = [];
  for (const t of turns) {
    out.push({ role: "user", text: t.user });
    for (const s of t.steps) if (s.kind === "text") out.push({ role: "assistant", text: s.text });
  }
  return out;
}

function writeOne(
  h: CorpusHomes,
  plan: SessionPlan,
  turns: TurnPlan[],
  prose: ProseGen,
): Promise<WrittenSession> {
  switch (plan.source) {
    case "claude-code":
      return writeClaude(h.claudeProjects, plan, turns);
    case "codex":
      return writeCodex(h.codex, plan, turns);
    case "pi":
      return writePi(h.pi, plan, turns);
    case "kimi":
      return writeKimi(h.kimi, plan, turns);
    case "copilot":
      return writeCopilot(h.copilot, plan, turns, prose);
    case "cursor":
      return writeCursor(h.cursor, plan, turns);
    case "goose":
      return writeGoose(h.goose, plan, turns);
    case "intendant":
      return writeIntendant(h.logsDir, plan, turns);
    default:
      throw new RangeError(`Source "${plan.source}" is not written by the relevance corpus`);
  }
}

function capitalize(s: string): string {
  return s.charAt(0).toUpperCase() + s.slice(1);
}

function shuffle<T>(xs: T[], rng: Rng): T[] {
  for (let i = xs.length - 1; i > 0; i--) {
    const j = rng.int(i + 1);
    [xs[i], xs[j]] = [xs[j]!, xs[i]!];
  }
  return xs;
}
