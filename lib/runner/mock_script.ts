/**
 * Mock provider scripts: JSONC, parsed with jsonc-parser and validated with zod. Every
 * error names the file, line and column (of the syntax error, or of the offending value
 * for a schema error), so a user can fix a script without guessing.
 */
import { findNodeAtLocation, type Node, parse, parseTree, printParseErrorCode } from "jsonc-parser";
import { z } from "zod";
import { InvalidInputError } from "../errors.ts";

const CommandSchema = z.strictObject({
  exec: z.string().min(1),
  nonce: z.string().optional(),
  /** Run as a pty command: stdout and stderr merged, an over-10-KiB result kept in full in _pty.log. */
  pty: z.boolean().optional(),
  timeout_ms: z.number().int().positive().optional(),
});

const TurnSchema = z.strictObject({
  reasoning: z.string().optional(),
  text: z.string().optional(),
  commands: z.array(CommandSchema).optional(),
  ask_human: z.string().min(1).optional(),
  done: z.boolean().optional(),
  usage: z.strictObject({
    input: z.number().int().nonnegative(),
    output: z.number().int().nonnegative(),
  }).optional(),
}).refine(
  (t) =>
    t.reasoning !== undefined || t.text !== undefined || t.commands !== undefined ||
    t.ask_human !== undefined || t.done !== undefined,
  { message: "a turn needs at least one of text, reasoning, commands, ask_human, done" },
);

export const MockScriptSchema = z.strictObject({
  model: z.string().optional(),
  turns: z.array(TurnSchema).min(1),
});
export type MockScript = z.infer<typeof MockScriptSchema>;
export type MockTurn = MockScript["turns"][number];
export type MockCommand = NonNullable<MockTurn["commands"]>[number];

/** 1-based line and column of a (UTF-16) offset in `text`. */
function lineCol(text: string, offset: number): { line: number; col: number } {
  let line = 1;
  let last = -1;
  for (let i = 0; i < offset && i < text.length; i++) {
    if (text.charCodeAt(i) === 10) {
      line++;
      last = i;
    }
  }
  return { line, col: offset - last };
}

/** Parses and validates script text; `file` is only used in messages. */
export function parseMockScript(text: string, file: string): MockScript {
  const errors: { error: number; offset: number; length: number }[] = [];
  const raw = parse(text, errors, { allowTrailingComma: true, disallowComments: false });
  if (errors.length > 0) {
    const e = errors[0]!;
    const { line, col } = lineCol(text, e.offset);
    throw new InvalidInputError(
      `Invalid mock script "${file}" at line ${line}, column ${col}: ${
        printParseErrorCode(e.error)
      }`,
    );
  }
  const r = MockScriptSchema.safeParse(raw);
  if (r.success) return r.data;
  const issue = r.error.issues[0]!;
  const tree = parseTree(text, [], { allowTrailingComma: true }) as Node | undefined;
  // Walk up the path until a node exists (a missing key points at its parent object).
  let node: Node | undefined;
  for (let n = issue.path.length; n >= 0 && !node; n--) {
    node = tree
      ? findNodeAtLocation(tree, issue.path.slice(0, n) as (string | number)[])
      : undefined;
  }
  const { line, col } = lineCol(text, node?.offset ?? 0);
  const where = issue.path.length ? ` ("${issue.path.join(".")}")` : "";
  throw new InvalidInputError(
    `Invalid mock script "${file}" at line ${line}, column ${col}${where}: ${issue.message}`,
  );
}

/** Reads and parses a script file; an unreadable file is an InvalidInputError naming it. */
export async function loadMockScript(path: string): Promise<MockScript> {
  let text: string;
  try {
    text = await Deno.readTextFile(path);
  } catch (err) {
    throw new InvalidInputError(`Cannot read mock script "${path}": ${(err as Error).message}`, {
      cause: err,
    });
  }
  return parseMockScript(text, path);
}
