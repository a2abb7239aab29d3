/**
 * Mock provider scripts: JSONC, parsed with jsonc-parser and validated with zod. Every
 * error names the file, line and column (of the syntax error, or of the offending value
 * for a schema error) and says what is wrong in words ("a comma is missing"), so a user
 * can fix a script without guessing. The schema carries a description per key, and
 * `mockScriptHelp()` renders `intendant run --help`'s format section from it: a key added
 * to the schema appears in the help, and a key without a description fails a test.
 */
import { findNodeAtLocation, type Node, parse, parseTree, printParseErrorCode } from "jsonc-parser";
import { z } from "zod";
import { InvalidInputError } from "../errors.ts";
import { PTY_FULL_LOG_THRESHOLD_BYTES } from "../session_log/mod.ts";
import { DEFAULT_COMMAND_TIMEOUT_MS } from "./runtime.ts";

const CommandSchema = z.strictObject({
  exec: z.string().min(1).describe("the command line, run with `sh -c` in the project directory"),
  nonce: z.string().optional().describe(
    "names the command's runtime logs and its tool result (default t<turn>)",
  ),
  pty: z.boolean().optional().describe(
    `true: stdout and stderr merged as on a terminal; a result over ${
      PTY_FULL_LOG_THRESHOLD_BYTES / 1024
    } KiB is kept in full in a _pty.log`,
  ),
  timeout_ms: z.number().int().positive().optional().describe(
    `kill the command after this many milliseconds (default ${DEFAULT_COMMAND_TIMEOUT_MS})`,
  ),
});

const TurnSchema = z.strictObject({
  reasoning: z.string().optional().describe("the model's reasoning, logged beside the reply"),
  text: z.string().optional().describe("what the assistant says"),
  commands: z.array(CommandSchema).optional().describe(
    "shell commands run one after another this turn; each:",
  ),
  ask_human: z.string().min(1).optional().describe(
    "a question; the session waits for `intendant ctl answer SESSION TEXT`",
  ),
  done: z.boolean().optional().describe(
    "true ends the session after this turn (it also ends after the last turn)",
  ),
  usage: z.strictObject({
    input: z.number().int().nonnegative().describe("prompt tokens"),
    output: z.number().int().nonnegative().describe("completion tokens"),
  }).optional().describe("token counts to record (default: estimated from the text)"),
}).refine(
  (t) =>
    t.reasoning !== undefined || t.text !== undefined || t.commands !== undefined ||
    t.ask_human !== undefined || t.done !== undefined,
  { message: "a turn needs at least one of text, reasoning, commands, ask_human, done" },
);

export const MockScriptSchema = z.strictObject({
  model: z.string().optional().describe(
    'the model name recorded for the session (default "mock-1")',
  ),
  turns: z.array(TurnSchema).min(1).describe(
    "one entry per model call, played in order; each turn needs at least one of text, reasoning, commands, ask_human, done:",
  ),
});
export type MockScript = z.infer<typeof MockScriptSchema>;
export type MockTurn = MockScript["turns"][number];
export type MockCommand = NonNullable<MockTurn["commands"]>[number];

/** A small script that uses every kind of turn; the help prints it and a test parses it. */
export const MOCK_SCRIPT_EXAMPLE = `{
  // JSONC: comments and trailing commas are fine
  "model": "mock-1",
  "turns": [
    {
      "reasoning": "Look around first.",
      "text": "Listing the project.",
      "commands": [{ "exec": "ls -la", "nonce": "ls1", "timeout_ms": 5000 }],
    },
    { "ask_human": "Delete the build directory?" },
    { "text": "Done.", "done": true, "usage": { "input": 120, "output": 8 } },
  ],
}`;

/** The schema's object behind optional/array wrappers, or null for a leaf. */
function objectInside(t: z.ZodType): z.ZodObject | null {
  if (t instanceof z.ZodOptional) return objectInside(t.unwrap() as z.ZodType);
  if (t instanceof z.ZodArray) return objectInside(t.element as z.ZodType);
  return t instanceof z.ZodObject ? t : null;
}

/** Every key of the script schema with its nesting depth and description, in order. */
export function mockScriptKeys(): { key: string; depth: number; description: string }[] {
  const out: { key: string; depth: number; description: string }[] = [];
  const walk = (o: z.ZodObject, depth: number) => {
    for (const [key, t] of Object.entries(o.shape) as [string, z.ZodType][]) {
      out.push({ key, depth, description: t.description ?? "" });
      const inner = objectInside(t);
      if (inner) walk(inner, depth + 1);
    }
  };
  walk(MockScriptSchema, 0);
  return out;
}

/** Help lines are wrapped to this many columns. */
const HELP_COLUMNS = 88;

/** The script format in words, rendered from the schema, with the example. */
export function mockScriptHelp(): string {
  const keys = mockScriptKeys();
  const at = Math.max(...keys.map((k) => 2 + k.depth * 2 + k.key.length)) + 2;
  const rows = keys.map((k) =>
    wrap(k.description, HELP_COLUMNS - at).map((l, i) =>
      (i === 0 ? `  ${"  ".repeat(k.depth)}${k.key}` : "").padEnd(at) + l
    ).join("\n")
  );
  return `mock script (--mock-script FILE): a JSONC file (JSON with comments and trailing commas)
holding one object:
${rows.join("\n")}

example:
${MOCK_SCRIPT_EXAMPLE.split("\n").map((l) => "  " + l).join("\n")}
`;
}

/** Splits `text` at spaces into lines of at most `width` characters (longer words whole). */
function wrap(text: string, width: number): string[] {
  const lines: string[] = [];
  let line = "";
  for (const word of text.split(" ")) {
    if (line && line.length + 1 + word.length > width) {
      lines.push(line);
      line = word;
    } else line = line ? `${line} ${word}` : word;
  }
  return [...lines, line];
}

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

/**
 * jsonc-parser's error codes in words. Keyed by printParseErrorCode's result type, so a
 * code added by a new jsonc-parser is a type error here until it has words.
 */
const PARSE_ERROR_WORDS: Record<ReturnType<typeof printParseErrorCode>, string> = {
  InvalidSymbol: "unexpected character",
  InvalidNumberFormat: "a number is malformed",
  PropertyNameExpected: "a property name in double quotes is expected",
  ValueExpected: "a value is expected",
  ColonExpected: "a colon is missing after the property name",
  CommaExpected: "a comma is missing",
  CloseBraceExpected: "a closing brace } is missing",
  CloseBracketExpected: "a closing bracket ] is missing",
  EndOfFileExpected: "unexpected text after the end of the object",
  InvalidCommentToken: "a comment is malformed",
  UnexpectedEndOfComment: "a block comment is not closed with */",
  UnexpectedEndOfString: 'a string is not closed with "',
  UnexpectedEndOfNumber: "a number ends too early",
  InvalidUnicode: "a \\u escape needs four hex digits",
  InvalidEscapeCharacter: "an unknown escape after \\ in a string",
  InvalidCharacter: "a string holds a control character (a raw tab or line break?)",
  "<unknown ParseErrorCode>": "the file is not valid JSONC",
};

/** What is wrong at a syntax error, in words. */
function syntaxWords(text: string, e: { error: number; offset: number; length: number }): string {
  if (text.trim() === "") return 'the file is empty: expected an object with "turns"';
  const words = PARSE_ERROR_WORDS[printParseErrorCode(e.error)];
  if (e.offset >= text.length) return `unexpected end of file: ${words}`;
  if (printParseErrorCode(e.error) !== "InvalidSymbol") return words;
  // jsonc-parser reports text after a complete object as a symbol, not EndOfFileExpected.
  const before: { error: number; offset: number; length: number }[] = [];
  const head = parse(text.slice(0, e.offset), before, { allowTrailingComma: true });
  if (head !== undefined && before.length === 0) {
    return PARSE_ERROR_WORDS.EndOfFileExpected;
  }
  // Show what was found; bare words and 'single quotes' are the usual slips.
  const found = JSON.stringify(
    Array.from(text.slice(e.offset, e.offset + e.length)).slice(0, 20).join(""),
  );
  return /^['A-Za-z_]/.test(text.slice(e.offset))
    ? `unexpected ${found}: strings and property names need double quotes`
    : `${words} ${found}`;
}

/** Parses and validates script text; `file` is only used in messages. */
export function parseMockScript(text: string, file: string): MockScript {
  const errors: { error: number; offset: number; length: number }[] = [];
  const raw = parse(text, errors, { allowTrailingComma: true, disallowComments: false });
  if (errors.length > 0) {
    // The first error is the cause; the rest are the parser recovering from it.
    const e = errors[0]!;
    // An empty file's "error" sits after its whitespace; point at its start instead.
    const { line, col } = lineCol(text, text.trim() === "" ? 0 : e.offset);
    throw new InvalidInputError(
      `Invalid mock script "${file}" at line ${line}, column ${col}: ${syntaxWords(text, e)}`,
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
