/**
 * A refused parameter in words (issue 25): zod's own messages ("Too big: expected string
 * to have <=1000 characters", "Invalid option: expected one of …") read as validator
 * internals. This turns one zod issue into what is wrong and what to do, keyed on the
 * issue's code. A message a schema wrote itself is kept as written: by this project's
 * convention such a message is a lowercase fragment ("must be a whole number from 1 to
 * 100"), while every zod default starts with a capital ("Too big: …", "Invalid input").
 * Values are never quoted back (a parameter can be the query, which is never logged or
 * reflected).
 */
import type { z } from "zod";

type Issue = z.core.$ZodIssue;

function unit(origin: unknown, n: number): string {
  const noun = origin === "string" ? "character" : origin === "array" ? "item" : "";
  return noun ? `${n} ${noun}${n === 1 ? "" : "s"}` : String(n);
}

/** `issue` as one sentence fragment: "is too long: at most 1000 characters; shorten it". */
export function issueInWords(issue: Issue): string {
  if (/^[a-z]/.test(issue.message)) return issue.message;
  switch (issue.code) {
    case "too_big": {
      const max = Number(issue.maximum);
      if (issue.origin === "string") {
        return `is too long: at most ${unit("string", max)}; shorten it`;
      }
      if (issue.origin === "array") return `has too many values: at most ${unit("array", max)}`;
      return `is too large: at most ${max}`;
    }
    case "too_small": {
      const min = Number(issue.minimum);
      if (issue.origin === "string") {
        return min <= 1
          ? "is empty: give a value"
          : `is too short: at least ${unit("string", min)}`;
      }
      if (issue.origin === "array") return `needs at least ${unit("array", min)}`;
      return `is too small: at least ${min}`;
    }
    case "invalid_value":
      return `must be one of ${issue.values.map((v) => String(v)).join(", ")}`;
    case "invalid_type":
      return issue.expected === "number" || issue.expected === "int"
        ? "must be a whole number"
        : `must be a ${issue.expected}`;
    case "invalid_format":
      return issue.format === "regex"
        ? "is not in the expected form"
        : `must be a valid ${issue.format}`;
    case "unrecognized_keys":
      return `has unknown fields: ${issue.keys.join(", ")}`;
    default:
      return issue.message;
  }
}
