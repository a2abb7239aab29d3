/**
 * Corpus shape: presets (how many sessions and messages, which huge sessions), and one
 * session's script (turns of a user prompt, assistant texts, reasoning and tool calls with
 * their output). Writers serialize a script into a source's exact on-disk format; the
 * script is what every source shares, so the homes differ only in format.
 */
import type { Source } from "../../lib/message_search/mod.ts";
import { Rng } from "./rng.ts";
import { assistantChars, type ProseGen, type ToolOutputs, userChars } from "./text.ts";

/** A corpus size. */
export interface Preset {
  name: string;
  sessions: number;
  /** Indexed prose messages (user + assistant records), huge sessions included. */
  messages: number;
  /** Share of the non-huge sessions per source. */
  shares: Partial<Record<Source, number>>;
  /** A few huge sessions (messages each), placed first. */
  huge: { source: Source; messages: number }[];
  /**
   * Every needle kind planted at least once in each source (text.ts `oweAll`), so each
   * query has hits in every source. Off in the five-source presets, which reproduce the
   * issue-16 corpus byte for byte (the same-run baseline of the twelve-source run).
   */
  needlesPerSource?: boolean;
}

/** Issue 16's corpus: the five original sources. */
const SHARES_FIVE: Partial<Record<Source, number>> = {
  "claude-code": 0.42,
  codex: 0.3,
  pi: 0.12,
  kimi: 0.1,
  intendant: 0.06,
};

/**
 * Every source (issue 17). The five keep their proportions (× 0.785); the seven new ones
 * share the rest by how widely they are used (Gemini and Copilot CLI most, Goose least).
 * Key order is the band order of pickByShare: the five first, as before.
 */
const SHARES_ALL: Partial<Record<Source, number>> = {
  "claude-code": 0.42 * 0.785,
  codex: 0.3 * 0.785,
  pi: 0.12 * 0.785,
  kimi: 0.1 * 0.785,
  intendant: 0.06 * 0.785,
  gemini: 0.045,
  copilot: 0.04,
  cursor: 0.035,
  opencode: 0.035,
  qwen: 0.025,
  droid: 0.02,
  goose: 0.015,
};

const HUGE_DEFAULT: Preset["huge"] = [
  { source: "claude-code", messages: 24_000 },
  { source: "codex", messages: 16_000 },
  { source: "claude-code", messages: 12_000 },
  { source: "pi", messages: 9_000 },
  { source: "kimi", messages: 8_000 },
  { source: "intendant", messages: 3_000 },
];
/**
 * The twelve-source presets' huge sessions: the five-source ones plus a long Gemini session
 * (its upserts replayed in one unit) and a long OpenCode one (one session of a shared
 * database re-derived from a snapshot).
 */
const HUGE_ALL: Preset["huge"] = [
  ...HUGE_DEFAULT,
  { source: "gemini", messages: 6_000 },
  { source: "opencode", messages: 4_000 },
];
const HUGE_SMALL: Preset["huge"] = [
  { source: "claude-code", messages: 2_000 },
  { source: "codex", messages: 1_000 },
];

/**
 * `default`, `quad` (4× default) and `small` hold all twelve sources; `default-five` and `small-five` are
 * issue 16's five-source corpora (same sizes), for a same-run comparison.
 */
export const PRESETS: Record<string, Preset> = {
  default: {
    name: "default",
    sessions: 1_700,
    messages: 530_000,
    shares: SHARES_ALL,
    huge: HUGE_ALL,
    needlesPerSource: true,
  },
  // Issue 27's scale check: the default corpus at 4× (6,800 sessions, 2.12M messages),
  // where a cost that grows with the corpus shows. The huge sessions stay default's: a
  // user has more sessions over time, not a 96k-message one.
  quad: {
    name: "quad",
    sessions: 6_800,
    messages: 2_120_000,
    shares: SHARES_ALL,
    huge: HUGE_ALL,
    needlesPerSource: true,
  },
  small: {
    name: "small",
    sessions: 60,
    messages: 12_000,
    shares: SHARES_ALL,
    huge: HUGE_SMALL,
    needlesPerSource: true,
  },
  "default-five": {
    name: "default-five",
    sessions: 1_700,
    messages: 530_000,
    shares: SHARES_FIVE,
    huge: HUGE_DEFAULT,
  },
  "small-five": {
    name: "small-five",
    sessions: 60,
    messages: 12_000,
    shares: SHARES_FIVE,
    huge: HUGE_SMALL,
  },
};

/** Scales a preset (the growth check runs the small one at two sizes). */
export function scaled(p: Preset, factor: number): Preset {
  return {
    ...p,
    name: `${p.name}x${factor}`,
    sessions: Math.max(5, Math.round(p.sessions * factor)),
    messages: Math.max(200, Math.round(p.messages * factor)),
    huge: p.huge.map((h) => ({ ...h, messages: Math.max(50, Math.round(h.messages * factor)) })),
  };
}

/** One session to write. */
export interface SessionPlan {
  index: number;
  source: Source;
  messages: number;
  huge: boolean;
  project: string;
  /** First and last line time (epoch ms). */
  startMs: number;
  endMs: number;
  seed: number;
}

const PROJECTS = [
  "/home/dev/shop",
  "/home/dev/api",
  "/home/dev/web.app",
  "/home/dev/café-app",
  "/home/dev/東京-tools",
  "/home/dev/données",
  "/home/dev/infra",
  "/srv/ops",
  "/home/dev/mobile",
  "/home/dev/data-pipeline",
  "/home/dev/ml/train",
  "/home/dev/docs site",
];

const DAY = 86_400_000;

/** Every session of the corpus, huge ones first, dated inside the last 13 days. */
export function planSessions(p: Preset, seed: number, nowMs: number): SessionPlan[] {
  const rng = new Rng(seed);
  const plans: SessionPlan[] = [];
  const hugeTotal = p.huge.reduce((n, h) => n + h.messages, 0);
  const rest = p.sessions - p.huge.length;
  const sources = Object.keys(p.shares) as Source[];
  const raw: number[] = [];
  for (let i = 0; i < rest; i++) raw.push(rng.lognormal(140, 1.0));
  const scale = (p.messages - hugeTotal) / raw.reduce((a, b) => a + b, 0);
  const add = (source: Source, messages: number, huge: boolean) => {
    const r = rng.fork(plans.length);
    // Huge sessions run up to the last day; the others end anywhere in the window.
    const endMs = nowMs - (huge ? r.range(1, 24) * 3_600_000 : r.range(10, 13 * 24 * 60) * 60_000);
    const spanMs = Math.min(messages * 20_000, 5 * DAY, endMs - (nowMs - 13.5 * DAY));
    plans.push({
      index: plans.length,
      source,
      messages,
      huge,
      project: r.pick(PROJECTS),
      startMs: endMs - spanMs,
      endMs,
      seed: r.u32(),
    });
  };
  for (const h of p.huge) add(h.source, h.messages, true);
  // Sources interleave by share (deterministic, not random: exact shares at any size).
  const picked = everySourceOnce(
    sources.filter((s) => (p.shares[s] ?? 0) > 0),
    Array.from({ length: rest }, (_, i) => pickByShare(sources, p.shares, i, rest)),
    new Set(p.huge.map((h) => h.source)),
  );
  for (let i = 0; i < rest; i++) {
    add(picked[i]!, Math.max(2, Math.min(5_000, Math.round(raw[i]! * scale))), false);
  }
  return plans;
}

/**
 * Gives every source of `sources` (those with a share) at least one session: a source the
 * interleaving left out (a small share at a small size) takes the last session of the
 * source holding the most. Leaves `picked` as it is when every source has one (the
 * presets at 1×), and draws nothing from the rng (only the source of a session changes).
 */
function everySourceOnce(sources: Source[], picked: Source[], hasHuge: Set<Source>): Source[] {
  const out = [...picked];
  const count = (s: Source) => out.filter((x) => x === s).length + (hasHuge.has(s) ? 1 : 0);
  for (const s of sources) {
    if (count(s) > 0) continue;
    const donor = sources.reduce((a, b) => (count(b) > count(a) ? b : a));
    if (count(donor) < 2) break; // fewer sessions than sources: nothing left to give
    out[out.lastIndexOf(donor)] = s;
  }
  return out;
}

function pickByShare(
  sources: Source[],
  shares: Partial<Record<Source, number>>,
  i: number,
  n: number,
) {
  const u = (i + 0.5) / n;
  let acc = 0;
  // Stride through sources so neighbours differ: position within each share band.
  const x = (u * 7.31) % 1;
  for (const s of sources) {
    acc += shares[s] ?? 0;
    if (x < acc) return s;
  }
  return sources.at(-1)!;
}

/** One step of an assistant turn. */
export type Step =
  | { kind: "text"; text: string }
  | { kind: "think"; text: string }
  | { kind: "tool"; name: string; cmd: string; output: string };

/** One turn: a user prompt, then the assistant's steps. */
export interface TurnPlan {
  user: string;
  steps: Step[];
}

const TOOLS = ["Bash", "Read", "Edit", "Grep", "Write"];
const COMMANDS = ["rg -n", "deno test", "cat", "git diff", "ls -la", "npm run build", "pytest -x"];

/** The session's turns: exactly `plan.messages` prose messages (user + assistant texts). */
export function scriptSession(
  plan: SessionPlan,
  prose: ProseGen,
  tools: ToolOutputs,
  o: { toolCap: number },
): TurnPlan[] {
  const rng = new Rng(plan.seed);
  const turns: TurnPlan[] = [];
  let left = plan.messages;
  // One over-cap reply per huge session (exercises the 256 KiB truncation).
  let capReply = plan.huge ? Math.floor(plan.messages / 2) : -1;
  while (left > 0) {
    const user = prose.message(rng, userChars(rng));
    left--;
    const steps: Step[] = [];
    const texts = Math.min(left, rng.chance(0.6) ? 1 : rng.chance(0.75) ? 2 : 3);
    for (let k = 0; k < texts; k++) {
      if (rng.chance(0.35)) steps.push({ kind: "think", text: prose.message(rng, 200) });
      const nTools = rng.chance(0.45) ? (rng.chance(0.8) ? 1 : 2) : 0;
      for (let t = 0; t < nTools; t++) {
        steps.push({
          kind: "tool",
          name: rng.pick(TOOLS),
          cmd: `${rng.pick(COMMANDS)} ${rng.pick(prose.words.slice(100, 2000))}`,
          output: tools.take(rng, tools.size(rng, o.toolCap)),
        });
      }
      steps.push({ kind: "text", text: prose.message(rng, assistantChars(rng, capReply-- === 0)) });
      left--;
    }
    turns.push({ user, steps });
  }
  return turns;
}

/** Lines a script produces at most (for spacing timestamps evenly). */
export function lineEstimate(turns: TurnPlan[]): number {
  let n = 0;
  for (const t of turns) n += 3 + t.steps.length * 3;
  return n;
}
