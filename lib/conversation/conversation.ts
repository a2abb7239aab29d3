/**
 * Conversation and conversation.jsonl. On disk: an optional header line
 * `{"conversation":1,"next_seq":N}` then one message per line. Appends add one complete
 * line (a torn tail from a crash is ignored on load); truncation (rollback) rewrites the
 * file atomically with a header that keeps next_seq, so a cut never lets a seq be reused.
 * A legacy file (any message with seq 0) is renumbered 1..N on load by
 * {@link Conversation.ensureSeqsAssigned}; a file whose seqs are all set is left alone,
 * because renumbering would break the events that already reference those seqs.
 * The file is read through the contained reader (a symlink, FIFO or hard link planted at
 * its name is refused with a ContainedReadError, never followed or waited on).
 */
import { join } from "node:path";
import {
  lineText,
  openRegularFileSync,
  readInside,
  refusalError,
  splitCompleteLines,
  writeAllSync,
  writeFileAtomic,
} from "../durable/mod.ts";
import { CONVERSATION_JSONL, type Provenance } from "../session_log/mod.ts";
import {
  contentHash16,
  estimateTokens,
  type Message,
  MessageSchema,
  type Role,
} from "./message.ts";

/** What loading found besides the messages. */
export interface LoadReport {
  malformedLines: number[];
  tornTailBytes: number;
}

const encoder = new TextEncoder();

export class Conversation {
  readonly messages: Message[] = [];
  #nextSeq = 1;
  /** Token budget for {@link windowed}; null means unbounded. */
  readonly contextWindow: number | null;

  constructor(options: { contextWindow?: number | null } = {}) {
    this.contextWindow = options.contextWindow ?? null;
  }

  get nextSeq(): number {
    return this.#nextSeq;
  }

  /** Loads conversation.jsonl from a session dir; a missing file is an empty conversation. */
  static async load(
    dir: string,
    options: { contextWindow?: number | null } = {},
  ): Promise<{ conversation: Conversation; report: LoadReport }> {
    const conv = new Conversation(options);
    // Whole, as far as the fstat size (a conversation has no cap of its own).
    const read = await readInside(dir, CONVERSATION_JSONL, {
      maxBytes: Number.MAX_SAFE_INTEGER,
      overflow: "truncate",
      hardlinks: "refuse",
    });
    if (!read.ok && read.reason === "missing") {
      return { conversation: conv, report: { malformedLines: [], tornTailBytes: 0 } };
    }
    if (!read.ok) throw refusalError(join(dir, CONVERSATION_JSONL), read.reason);
    const bytes = read.bytes;
    const { lines, consumedOffset } = splitCompleteLines(bytes);
    const malformed: number[] = [];
    let headerNext = 0;
    for (const span of lines) {
      if (span.end === span.start) continue;
      let raw: unknown;
      try {
        raw = JSON.parse(lineText(bytes, span));
      } catch {
        // Counted and reported by the caller; one bad line never loses the rest.
        malformed.push(span.lineNo);
        continue;
      }
      if (raw && typeof raw === "object" && "conversation" in raw) {
        const n = (raw as { next_seq?: unknown }).next_seq;
        if (typeof n === "number" && Number.isInteger(n) && n > 0) headerNext = n;
        continue;
      }
      const r = MessageSchema.safeParse(raw);
      if (r.success) conv.messages.push(r.data);
      else malformed.push(span.lineNo);
    }
    const maxSeq = conv.messages.reduce((m, x) => Math.max(m, x.seq), 0);
    conv.#nextSeq = Math.max(headerNext, maxSeq + 1, 1);
    return {
      conversation: conv,
      report: { malformedLines: malformed, tornTailBytes: bytes.length - consumedOffset },
    };
  }

  /**
   * Renumbers a legacy conversation (any seq 0) to 1..N and returns the epoch mapping
   * `[[seq, role, content-hash16], …]`; returns null (and changes nothing) when every
   * seq is already assigned.
   */
  ensureSeqsAssigned(): [number, string, string][] | null {
    if (!this.messages.some((m) => m.seq === 0)) return null;
    this.messages.forEach((m, i) => (m.seq = i + 1));
    this.#nextSeq = this.messages.length + 1;
    return this.messages.map((m) => [m.seq, m.role, contentHash16(m.content)]);
  }

  /** Appends a message with the next seq; persists it as one line when `dir` is given. */
  append(
    d: { role: Role; content: string; provenance: Provenance; toolCallId?: string; tsMs?: number },
    dir?: string,
  ): Message {
    const msg: Message = {
      seq: this.#nextSeq++,
      role: d.role,
      content: d.content,
      provenance: d.provenance,
      ts_ms: d.tsMs ?? Date.now(),
    };
    if (d.toolCallId !== undefined) msg.tool_call_id = d.toolCallId;
    this.messages.push(msg);
    if (dir) {
      const f = openRegularFileSync(dir, CONVERSATION_JSONL, { root: dir, append: true });
      try {
        writeAllSync(f, encoder.encode(JSON.stringify(msg) + "\n"));
      } finally {
        f.close();
      }
    }
    return msg;
  }

  /**
   * Makes sure future seqs are greater than `seq` (e.g. the highest message_seq the
   * session log already references, should conversation.jsonl have lost its tail).
   */
  reserveThrough(seq: number): void {
    if (seq + 1 > this.#nextSeq) this.#nextSeq = seq + 1;
  }

  /** Drops every message with seq > `seq`. The counter is NOT rewound. Returns the count dropped. */
  truncateAfter(seq: number): number {
    const keep = this.messages.filter((m) => m.seq <= seq);
    const dropped = this.messages.length - keep.length;
    this.messages.splice(0, this.messages.length, ...keep);
    return dropped;
  }

  /** Atomically rewrites conversation.jsonl with a header that pins next_seq. */
  async save(dir: string): Promise<void> {
    const header = JSON.stringify({ conversation: 1, next_seq: this.#nextSeq });
    const body = this.messages.map((m) => JSON.stringify(m)).join("\n");
    await writeFileAtomic(join(dir, CONVERSATION_JSONL), header + "\n" + (body ? body + "\n" : ""));
  }

  /**
   * The request view: the newest messages that fit the context window (estimated
   * tokens), always keeping the first message (the task).
   */
  windowed(): Message[] {
    if (this.contextWindow === null || this.messages.length === 0) return [...this.messages];
    const [first, ...rest] = this.messages;
    let budget = this.contextWindow - estimateTokens(first!.content);
    const tail: Message[] = [];
    for (let i = rest.length - 1; i >= 0 && budget > 0; i--) {
      const cost = estimateTokens(rest[i]!.content);
      if (cost > budget) break;
      budget -= cost;
      tail.unshift(rest[i]!);
    }
    return [first!, ...tail];
  }
}
