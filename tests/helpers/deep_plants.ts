/**
 * Lines that plant a word where only Deep Search can find it, shaped exactly like the
 * agents' own records: a Codex `function_call_output` response item (a command's output,
 * with a masker-detectable key in it) and a Claude Code user row holding a `tool_result`
 * block. Neither is ever indexed as a message.
 */
export const CODEX_WORD = "E0599-FLUMMOX-CODEXONLY";
export const CLAUDE_WORD = "TS2345-GRUNTLE-CLAUDEONLY";
// A shape the masker knows (an AWS access key id), planted in tool output.
export const SECRET = "AKIAQWERTYUIOPASDFGH";

export function codexOutputLine(word: string): string {
  return JSON.stringify({
    timestamp: new Date().toISOString(),
    type: "response_item",
    payload: {
      type: "function_call_output",
      call_id: "call_deepsearch000000000001",
      output:
        `Chunk ID: 9\nProcess exited with code 101\nOutput:\nerror[E0599]: ${word} no method ` +
        `named \`frob\` found; key ${SECRET}`,
    },
  }) + "\n";
}

/** The row to append to the Claude Code transcript at `path` (chained onto its last row). */
export function claudeToolResultLine(word: string, sessionId: string, path?: string): string {
  return JSON.stringify({
    parentUuid: path ? lastUuidOf(path) : null,
    isSidechain: false,
    userType: "external",
    cwd: "/home/dev/cafe",
    sessionId,
    version: "2.0.14",
    type: "user",
    message: {
      role: "user",
      content: [{
        type: "tool_result",
        tool_use_id: "toolu_01DeepSearchFixture0001",
        content: `src/menu.ts(12,5): error ${word}: Argument of type 'string' is not assignable`,
      }],
    },
    uuid: "5e0c3f1a-0000-4000-8000-00000000d33f",
    timestamp: new Date().toISOString(),
  }) + "\n";
}

/** The `uuid` of the last row of a Claude Code transcript that has one. */
function lastUuidOf(path: string): string | null {
  const lines = Deno.readTextFileSync(path).trimEnd().split("\n").reverse();
  for (const l of lines) {
    try {
      const u = JSON.parse(l).uuid;
      if (typeof u === "string") return u;
    } catch {
      // Not a JSON row (a torn tail): look further back.
    }
  }
  return null;
}
