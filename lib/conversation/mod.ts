/**
 * The native conversation: messages with seq and provenance, conversation.jsonl load and
 * save, the legacy renumbering that feeds the epoch marker.
 */
export { Conversation } from "./conversation.ts";
export type { LoadReport } from "./conversation.ts";
export { contentHash16, estimateTokens, MessageSchema, ROLES } from "./message.ts";
export type { Message, Role } from "./message.ts";
