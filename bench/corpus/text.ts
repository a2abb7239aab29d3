/**
 * Prose and tool output for the corpus: an English-like Zipfian vocabulary (real function
 * words on top, ~12k synthetic content words below), message lengths drawn log-normally
 * with long tails (pasted logs, long answers, a few over the 256 KiB record cap), accented
 * and CJK text, and the benchmark's needles planted at controlled rates so every query of
 * the fixed set has a known order of magnitude of hits. Tool output is sliced from one
 * pre-generated log-like pool (fast, and it never carries the rare needle, so its hit
 * count is exact).
 */
import { Rng, Zipf } from "./rng.ts";

/** The fixed query set (bench/queries.ts runs them; rg looks for the same needles). */
export const NEEDLES = {
  rare: "zephyrquartz",
  /** Exactly three hits at any size, one inside a longer word (`anemometers`). */
  scarce: "anemometer",
  mid: "kubernetes",
  stopword: "the",
  phrase: "connection pool timeout",
  and: ["flaky", "migration"],
  accented: "café",
  cjk: "東京",
  none: "qqxjvzzk",
} as const;

/** Planting rates per prose message (the rare needle's rate is set per corpus: ≈ 8 hits). */
const RATE = { mid: 0.005, phrase: 0.0006, flaky: 0.008, migration: 0.01, both: 0.0008 };
const RATE_ACCENT = 0.0012;
const RATE_CJK = 0.0012;

const COMMON = (
  "the of and to a in is it that for you this with on be are as we can not or at by have " +
  "from if will an but so do all there what use was which one file test it's need should " +
  "then now function error code here just like also would make when more run see let into " +
  "check some new value line does build change only add fix type them other way out using " +
  "because first into about after before our your has time data call return where why how " +
  "no yes up any these those each both same still again looks works think want try sure " +
  "right next back update config server client request response path module import export " +
  "class method string number list map array object field table query index store cache " +
  "log output input result case branch commit merge review diff patch release version"
).split(" ");
const ONSETS = "b c d f g h j k l m n p r s t v w z br cl dr fl gr pl pr sk sl sp st str th tr"
  .split(" ");
const VOWELS = "a e i o u ai ea ee io ou oa".split(" ");
const CODAS = " n r s t l m nd nt rk st ck ng x sh ".split(" ");
const ACCENTED = (
  "naïve déjà résumé über señor façade coöperate Ångström smörgåsbord crème brûlée " +
  "jalapeño piñata fiancée Zürich São Paulo garçon rôle élan Bjørn Kraków"
).split(" ");
/** CJK characters for filler sentences: 東 and 京 are left out so 東京 is only planted. */
const CJK =
  "修复登录缓存问题测试数据库服务器配置日志错误文件函数模块版本更新部署检查运行结果请帮我看这个为什么失败了"
    .split("");
const EMOJI = ["🚀", "✅", "🍪", "🔥", "👍", "🐛", "📦"];
const NEEDLE_WORDS = Object.values(NEEDLES).flat().map((n) => n.toLowerCase());

/** Deterministic prose for one corpus (one vocabulary, one needle budget). */
export class ProseGen {
  readonly words: string[];
  readonly #zipf: Zipf;
  readonly #rareRate: number;
  /** Planted-needle tallies (exact: the rare one is only ever planted in prose). */
  readonly planted = { rare: 0, scarce: 0, mid: 0, phrase: 0, and: 0, accented: 0, cjk: 0 };
  /** Plantable messages made so far, and the ones that carry the scarce needle. */
  #made = 0;
  readonly #scarceAt: readonly number[];
  /** Set by {@link oweAll}: the next planted message carries every needle kind. */
  #owed = false;

  constructor(seed: number, expectedMessages: number) {
    const rng = new Rng(seed ^ 0x5eed);
    const words = [...COMMON];
    const seen = new Set(words);
    while (words.length < 12_000) {
      let w = "";
      const syl = 1 + rng.int(3);
      for (let i = 0; i < syl; i++) w += rng.pick(ONSETS) + rng.pick(VOWELS) + rng.pick(CODAS);
      if (w.length < 3 || seen.has(w) || NEEDLE_WORDS.some((n) => w.includes(n))) continue;
      seen.add(w);
      words.push(w);
    }
    this.words = words;
    this.#zipf = new Zipf(words.length, 1.05);
    this.#rareRate = 8 / Math.max(1, expectedMessages);
    // Fixed positions, no rng draw: every other plant (and so the rest of the corpus)
    // stays what it was before this needle existed.
    this.#scarceAt = [0.25, 0.5, 0.75].map((f) => Math.floor(f * expectedMessages));
  }

  /**
   * Makes the next planted message carry every needle kind once: the corpus calls it
   * before a source's first session, so every query of the fixed set has hits in every
   * source (the rates alone leave a small source without the rare needle).
   */
  oweAll(): void {
    this.#owed = true;
  }

  /**
   * One message of about `chars` characters. `plant: false` plants no needle (text a
   * format then drops from its file, e.g. a Copilot rewind: a needle there would be
   * counted in `planted` but never be on disk).
   */
  message(rng: Rng, chars: number, o: { plant?: boolean } = {}): string {
    const parts: string[] = [];
    let len = 0;
    let sentence = 0;
    while (len < chars) {
      const s = this.#sentence(rng, sentence++ === 0);
      parts.push(s);
      len += s.length + 1;
      if (rng.chance(0.04)) {
        const code = "`" + rng.pick(["src/", "lib/", "tests/"]) + rng.pick(this.words.slice(200)) +
          rng.pick([".ts", ".rs", ".py", "_test.ts"]) + "`";
        parts.push(code);
        len += code.length + 1;
      }
    }
    let text = parts.join(" ");
    if (rng.chance(0.05)) text += " " + this.#accented(rng);
    if (rng.chance(0.03)) text += " " + this.#cjk(rng);
    if (rng.chance(0.02)) text += " " + rng.pick(EMOJI);
    return o.plant === false ? text : this.#plant(rng, text);
  }

  #sentence(rng: Rng, first: boolean): string {
    const n = 4 + Math.min(40, Math.floor(rng.lognormal(9, 0.5)));
    const ws: string[] = [];
    for (let i = 0; i < n; i++) ws.push(this.words[this.#zipf.sample(rng)]!);
    if (first || rng.chance(0.8)) ws[0] = ws[0]![0]!.toUpperCase() + ws[0]!.slice(1);
    return ws.join(" ") + rng.pick([".", ".", ".", "?", "!", ":"]);
  }

  #accented(rng: Rng): string {
    const w = rng.pick(ACCENTED);
    // Some texts carry the decomposed (NFD) spelling, as macOS file names and pastes do.
    return rng.chance(0.3) ? w.normalize("NFD") : w;
  }

  #cjk(rng: Rng): string {
    let s = "";
    const n = 4 + rng.int(14);
    for (let i = 0; i < n; i++) s += rng.pick(CJK);
    return s + "。";
  }

  /** Inserts needles at their rates, at word boundaries. */
  #plant(rng: Rng, text: string): string {
    const ins: string[] = [];
    const made = this.#made++;
    const scarce = this.#scarceAt.indexOf(made);
    if (scarce >= 0) {
      // Inserted mid-text below without a draw; the second one is the plural.
      ins.push(scarce === 1 ? `${NEEDLES.scarce}s` : NEEDLES.scarce);
      this.planted.scarce++;
    }
    if (this.#owed) {
      // No rng draw here: the random plants below stay what they would have been.
      this.#owed = false;
      ins.push(
        NEEDLES.rare,
        NEEDLES.mid,
        `the ${NEEDLES.phrase} again`,
        `${NEEDLES.and[0]} ${NEEDLES.and[1]}`,
        NEEDLES.accented,
        `在${NEEDLES.cjk}的服务器`,
      );
      for (const k of ["rare", "mid", "phrase", "and", "accented", "cjk"] as const) {
        this.planted[k]++;
      }
    }
    if (rng.chance(this.#rareRate)) {
      ins.push(NEEDLES.rare);
      this.planted.rare++;
    }
    if (rng.chance(RATE.mid)) {
      ins.push(NEEDLES.mid);
      this.planted.mid++;
    }
    if (rng.chance(RATE.phrase)) {
      ins.push(`the ${NEEDLES.phrase} again`);
      this.planted.phrase++;
    }
    if (rng.chance(RATE.both)) {
      ins.push(`${NEEDLES.and[0]} ${rng.pick(this.words.slice(0, 50))} ${NEEDLES.and[1]}`);
      this.planted.and++;
    } else {
      if (rng.chance(RATE.flaky)) ins.push(NEEDLES.and[0]);
      if (rng.chance(RATE.migration)) ins.push(NEEDLES.and[1]);
    }
    if (rng.chance(RATE_ACCENT)) {
      ins.push(rng.chance(0.4) ? NEEDLES.accented.normalize("NFD") : NEEDLES.accented);
      this.planted.accented++;
    }
    if (rng.chance(RATE_CJK)) {
      ins.push(`在${NEEDLES.cjk}的服务器`);
      this.planted.cjk++;
    }
    if (ins.length === 0) return text;
    const words = text.split(" ");
    for (const n of ins) {
      // The scarce needle goes in the middle without a draw (see the constructor).
      const at = n.startsWith(NEEDLES.scarce) ? words.length >> 1 : rng.int(words.length + 1);
      words.splice(at, 0, n);
    }
    return words.join(" ");
  }
}

/*
 * Prose lengths are calibrated to the one published measurement of a real corpus at this
 * scale: claude-code-log's 532,728 messages held 64.2 MB of user + assistant prose
 * (≈ 120 bytes a message on average; peers.md §5). Most turns are short ("yes", "run the
 * tests", a one-paragraph answer); long pastes and long answers are a thin tail.
 */

/** A user prompt's length in characters: short, with a thin tail of pasted logs. */
export function userChars(rng: Rng): number {
  if (rng.chance(0.001)) return rng.range(8_000, 30_000);
  return Math.max(4, Math.min(4_000, Math.round(rng.lognormal(50, 1.0))));
}

/** An assistant reply's length: a little longer, a thin tail of long answers, rarely over the record cap. */
export function assistantChars(rng: Rng, huge: boolean): number {
  if (huge) return rng.range(270_000, 400_000);
  if (rng.chance(0.0005)) return rng.range(20_000, 60_000);
  return Math.max(12, Math.min(8_000, Math.round(rng.lognormal(80, 1.0))));
}

/** Tool output sliced from a shared pool: mostly small, a tail of 64 KiB–1 MiB dumps. */
export class ToolOutputs {
  readonly #pool: string;

  constructor(prose: ProseGen, seed: number) {
    const rng = new Rng(seed ^ 0x70015);
    const lines: string[] = [];
    let len = 0;
    while (len < 2 << 20) {
      const ws: string[] = [];
      const n = 3 + rng.int(12);
      for (let i = 0; i < n; i++) ws.push(rng.pick(prose.words.slice(0, 3000)));
      if (rng.chance(0.01)) ws.push(NEEDLES.mid);
      const l = `${rng.pick(["INFO", "DEBUG", "WARN", "ok", "PASS", "  at"])} ${ws.join(" ")} ${
        rng.int(100000)
      }`;
      lines.push(l);
      len += l.length + 1;
    }
    this.#pool = lines.join("\n");
  }

  /** Output of about `bytes` characters (pool windows concatenated). */
  take(rng: Rng, bytes: number): string {
    let out = "";
    while (out.length < bytes) {
      const n = Math.min(bytes - out.length, this.#pool.length >> 1);
      const at = rng.int(this.#pool.length - n);
      out += this.#pool.slice(at, at + n);
    }
    return out;
  }

  /** A tool output's size: small, with a 0.5% tail of 64 KiB–1 MiB. */
  size(rng: Rng, cap: number): number {
    if (rng.chance(0.005)) return Math.min(cap, rng.range(64 << 10, 1 << 20));
    return Math.min(cap, Math.max(20, Math.round(rng.lognormal(700, 1.2))));
  }
}
