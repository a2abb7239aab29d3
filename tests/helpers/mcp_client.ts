/**
 * The real MCP SDK client over stdio against the real program (`intendant mcp --locked`,
 * run from this checkout's deno.json launch profile), for the MCP e2e tests: connect with an
 * environment and extra flags, call a tool and get its text and error flag. The server's
 * stderr is collected for diagnostics; `pid` is the launcher's (its child is the locked
 * server).
 */
import { join } from "node:path";
// @ts-types="@modelcontextprotocol/sdk/client/index"
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
// @ts-types="@modelcontextprotocol/sdk/client/stdio"
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { MAIN } from "./cli.ts";
import { DENO, REPO_ROOT } from "./temp.ts";

/** A tool result as text. */
export interface ToolText {
  text: string;
  isError: boolean;
}

/** Calls tool `name` and joins its text content. */
export async function callTool(
  client: Client,
  name: string,
  args: Record<string, unknown> = {},
): Promise<ToolText> {
  const r = await client.callTool({ name, arguments: args });
  const content = r.content as { type: string; text: string }[];
  return { text: content.map((c) => c.text).join("\n"), isError: r.isError === true };
}

/** Starts `intendant mcp --locked …extra` under `env` and connects a client to it. */
export async function connectMcp(env: Record<string, string>, extra: string[] = []) {
  const transport = new StdioClientTransport({
    command: DENO,
    args: [
      "run",
      "--quiet",
      `--config=${join(REPO_ROOT, "deno.json")}`,
      "-P=launch",
      MAIN,
      "mcp",
      "--locked",
      ...extra,
    ],
    env,
    stderr: "pipe",
  });
  let stderr = "";
  transport.stderr?.on("data", (c: Uint8Array) => stderr += new TextDecoder().decode(c));
  const client = new Client({ name: "intendant-test", version: "0" });
  await client.connect(transport);
  return { client, stderr: () => stderr, pid: transport.pid };
}
