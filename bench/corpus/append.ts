/**
 * One more user message in a session's own format: the incremental figure appends these
 * lines (exactly what the fixtures' appendTarget.userLine writes) to a live session and
 * times how soon a query finds them.
 */
import { buildEvent } from "../../lib/session_log/mod.ts";
import { ccUuid } from "../../tests/fixtures/claude_fixture.ts";
import { piEntryId } from "../../tests/fixtures/pi_fixture.ts";
import type { AppendSpec } from "./types.ts";

/** Builds successive user lines for one session (chains parents across calls). */
export function appender(spec: AppendSpec): (text: string, ms: number) => string {
  let i = 0;
  let parent = spec.source === "claude-code" ? spec.tip : spec.source === "pi" ? spec.leaf : "";
  return (text, ms) => {
    i++;
    const timestamp = new Date(ms).toISOString();
    switch (spec.source) {
      case "claude-code": {
        const uuid = ccUuid(`${spec.sessionId}:bench-append:${i}:${ms}`);
        const line = JSON.stringify({
          parentUuid: parent,
          isSidechain: false,
          userType: "external",
          cwd: spec.cwd,
          sessionId: spec.sessionId,
          version: "2.1.142",
          gitBranch: "main",
          type: "user",
          message: { role: "user", content: text },
          uuid,
          timestamp,
        });
        parent = uuid;
        return line + "\n";
      }
      case "pi": {
        const id = piEntryId(`bench-append:${spec.path}:${i}:${ms}`);
        const line = JSON.stringify({
          type: "message",
          id,
          parentId: parent,
          timestamp,
          message: { role: "user", content: [{ type: "text", text }], timestamp: ms },
        });
        parent = id;
        return line + "\n";
      }
      case "codex":
        return JSON.stringify({
          timestamp,
          type: "event_msg",
          payload: {
            type: "user_message",
            message: text,
            images: [],
            local_images: [],
            text_elements: [],
          },
        }) + "\n";
      case "kimi":
        return JSON.stringify({
          type: "context.append_message",
          agentId: "main",
          message: {
            role: "user",
            content: [{ type: "text", text }],
            toolCalls: [],
            origin: { kind: "user" },
          },
          time: ms,
        }) + "\n";
      case "intendant":
        return JSON.stringify(
          buildEvent(
            "conversation_message",
            { message_seq: 1_000_000 + i, role: "user", provenance: "follow_up", text },
            {},
            ms,
          ).event,
        ) + "\n";
    }
  };
}
