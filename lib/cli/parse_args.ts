/**
 * A small declarative argv parser (JSR's @std/cli is unreachable here). Flags are
 * `--name value`, `--name=value` or boolean `--name`; `--` ends flags. Unknown flags
 * and missing values are InvalidInputError with the offending token quoted.
 */
import { InvalidInputError } from "../errors.ts";

/** Declares one flag. */
export interface FlagSpec {
  type: "string" | "boolean" | "number";
  /** Single-letter alias, without the dash. */
  short?: string;
  /** Repeatable: collects every value into an array. */
  multiple?: boolean;
}

/** Parsed result: flag values by name, and positionals in order. */
export interface ParsedArgs {
  flags: Record<string, string | number | boolean | (string | number)[]>;
  positionals: string[];
}

/** Parses `argv` against `spec`. */
export function parseArgs(argv: readonly string[], spec: Record<string, FlagSpec>): ParsedArgs {
  const flags: ParsedArgs["flags"] = {};
  const positionals: string[] = [];
  const byShort = new Map<string, string>();
  for (const [name, s] of Object.entries(spec)) if (s.short) byShort.set(s.short, name);
  for (let i = 0; i < argv.length; i++) {
    const tok = argv[i]!;
    if (tok === "--") {
      positionals.push(...argv.slice(i + 1));
      break;
    }
    let name: string | undefined;
    let inline: string | undefined;
    if (tok.startsWith("--")) {
      const eq = tok.indexOf("=");
      name = eq >= 0 ? tok.slice(2, eq) : tok.slice(2);
      inline = eq >= 0 ? tok.slice(eq + 1) : undefined;
    } else if (tok.startsWith("-") && tok.length === 2 && tok !== "-") {
      name = byShort.get(tok.slice(1));
      if (!name) throw new InvalidInputError(`Unknown flag "${tok}"`);
    } else {
      positionals.push(tok);
      continue;
    }
    const s = spec[name];
    if (!s) throw new InvalidInputError(`Unknown flag "--${name}"`);
    let value: string | number | boolean;
    if (s.type === "boolean") {
      if (inline !== undefined && !["true", "false"].includes(inline)) {
        throw new InvalidInputError(`Flag "--${name}" takes no value, got "${inline}"`);
      }
      value = inline !== "false";
    } else {
      const raw = inline ?? argv[++i];
      if (raw === undefined) throw new InvalidInputError(`Flag "--${name}" needs a value`);
      if (s.type === "number") {
        const n = Number(raw);
        if (raw.trim() === "" || !Number.isFinite(n)) {
          throw new InvalidInputError(`Flag "--${name}" needs a number, got "${raw}"`);
        }
        value = n;
      } else value = raw;
    }
    if (s.multiple && typeof value !== "boolean") {
      const prev = flags[name];
      flags[name] = Array.isArray(prev) ? [...prev, value] : [value];
    } else flags[name] = value;
  }
  return { flags, positionals };
}

/** Reads a string flag or undefined. */
export function stringFlag(args: ParsedArgs, name: string): string | undefined {
  const v = args.flags[name];
  return typeof v === "string" ? v : undefined;
}

/** Reads a number flag or undefined. */
export function numberFlag(args: ParsedArgs, name: string): number | undefined {
  const v = args.flags[name];
  return typeof v === "number" ? v : undefined;
}

/** Reads a boolean flag (false when absent). */
export function boolFlag(args: ParsedArgs, name: string): boolean {
  return args.flags[name] === true;
}
