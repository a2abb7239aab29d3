/**
 * The tools' argument schemas, built so a refusal says what to do in words. The MCP SDK
 * validates arguments against these zod schemas before a tool runs and answers an
 * isError result "Input validation error: Invalid arguments for tool T: <message> at
 * <field>" — zod's own wording ("Too big: expected string to have <=500 characters") told
 * an agent nothing it could act on, so every check here carries its own message, written
 * to read well before the SDK's " at <field>".
 * Lists a model often passes as one value (`source: "codex"`, `machine: "laptop"`) accept
 * either form; oneOrMany() turns them into lists for the tools.
 */
import { z } from "zod";

/** A required or optional text argument of 1..max characters. */
export function textArg(o: { max: number; what: string }) {
  return z.string({ error: `expected ${o.what} as a string` })
    .min(1, `is empty: give ${o.what}`)
    .max(o.max, `is too long: at most ${o.max} characters; shorten it`);
}

/** An integer argument in [min, max] (max absent: no upper bound). */
export function intArg(o: { min: number; max?: number; what: string }) {
  const range = o.max === undefined ? `${o.min} or more` : `${o.min} to ${o.max}`;
  const msg = `must be a whole number from ${range} (${o.what})`;
  const n = z.number({ error: msg }).int(msg).min(o.min, msg);
  return o.max === undefined ? n : n.max(o.max, msg);
}

/** One of `values`, or a list of them: what an agent means by `source: "codex"`. */
export function enumListArg<const T extends readonly [string, ...string[]]>(
  values: T,
  o: { what: string },
) {
  const msg = `must be one of ${values.join(", ")} (${o.what}), or a list of them`;
  const one = z.enum(values, { error: msg });
  return z.union([one, z.array(one, { error: msg }).max(values.length, msg)], { error: msg });
}

/** A name matching `re` (described in words by `rule`), or a list of such names. */
export function nameListArg(o: { re: RegExp; max: number; rule: string; maxItems: number }) {
  const msg = `must be a name or a list of names; ${o.rule}`;
  const one = z.string({ error: msg }).min(1, msg).max(o.max, msg).regex(o.re, msg);
  return z.union([one, z.array(one, { error: msg }).min(1, msg).max(o.maxItems, msg)], {
    error: msg,
  });
}

/** `v` as a list: one value becomes a list of one, absent stays absent. */
export function oneOrMany<T>(v: T | T[] | undefined): T[] | undefined {
  if (v === undefined) return undefined;
  return Array.isArray(v) ? v : [v];
}
