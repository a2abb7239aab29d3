/**
 * The native conversation's message: seq (a monotonic per-conversation ordinal assigned
 * at append and never reused, not even after truncation), role, content, provenance.
 * Provenance drives what enters the message lane: only genuine user entries and
 * assistant prose do; system injections, tool output and summaries never.
 */
import { createHash } from "node:crypto";
import { z } from "zod";
import { PROVENANCES } from "../session_log/mod.ts";

export const ROLES = ["system", "user", "assistant", "tool"] as const;
export type Role = (typeof ROLES)[number];

export const MessageSchema = z.object({
  seq: z.number().int().nonnegative().default(0),
  role: z.enum(ROLES),
  content: z.string(),
  provenance: z.enum(PROVENANCES).default("unknown"),
  ts_ms: z.number().int().optional(),
  /** For tool messages: which command (nonce) produced it. */
  tool_call_id: z.string().optional(),
});
export type Message = z.infer<typeof MessageSchema>;

/** First 16 hex digits of sha256(content): the epoch marker's correlation hash. */
export function contentHash16(content: string): string {
  return createHash("sha256").update(content).digest("hex").slice(0, 16);
}

/** Rough token estimate (4 bytes a token), used for context windows and mock usage. */
export function estimateTokens(text: string): number {
  return Math.ceil(new TextEncoder().encode(text).length / 4);
}
