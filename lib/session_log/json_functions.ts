/**
 * Which functions a model's extracted JSON asked for (the json_extracted event). The
 * command shape varies by provider: `{function: "..."}`, `{name: "..."}`, or a single
 * verb key such as `{exec: "ls"}`; a wrapper object may hold them under `commands`.
 */

const VERB_KEYS = [
  "exec",
  "execPty",
  "askHuman",
  "readFile",
  "writeFile",
  "editFile",
  "search",
  "done",
];

/** Function names in order of appearance; unrecognizable entries are skipped. */
export function extractFunctionNames(value: unknown): string[] {
  const out: string[] = [];
  const visit = (v: unknown, depth: number) => {
    if (depth > 4 || v === null || typeof v !== "object") return;
    if (Array.isArray(v)) {
      for (const item of v) visit(item, depth + 1);
      return;
    }
    const o = v as Record<string, unknown>;
    if (Array.isArray(o.commands)) {
      visit(o.commands, depth + 1);
      return;
    }
    if (typeof o.function === "string") out.push(o.function);
    else if (typeof o.name === "string" && ("arguments" in o || "args" in o)) out.push(o.name);
    else {
      const verb = VERB_KEYS.find((k) => k in o);
      if (verb) out.push(verb === "exec" && o.pty === true ? "execPty" : verb);
    }
  };
  visit(value, 0);
  return out;
}
