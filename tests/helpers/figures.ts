/**
 * Reliability figures: every reliability-plan test reports its figure line through
 * `figure(id, line)`, printed as `FIGURE <id>: <line>`, exactly like the plan's last
 * column. `deno task reliability` runs the suite, collects these lines into one table and
 * writes tests/RELIABILITY.md.
 */

/** Prints one figure line, e.g. figure("A1", "kill points tried: 200, …"). */
export function figure(id: string, line: string): void {
  if (!/^[A-H]\d{1,2}$/.test(id)) throw new RangeError(`Invalid reliability-plan id "${id}"`);
  console.log(`FIGURE ${id}: ${line}`);
}

/** True when the plan's full N should run (`deno task test:stress`). */
export const STRESS = Deno.env.get("INTENDANT_STRESS") === "1";
