/**
 * The one limits resolver. A source declares its bounds as a frozen object of defaults
 * (the values its spec or format notes justify) and resolves caller overrides (tests
 * shrink them) here. Fail-closed: an unknown key, or a value that is not a positive safe
 * integer, is a RangeError naming the source and the key; `undefined` keeps the default.
 */

/** A source's bounds: named positive integers (an interface of number fields fits). */
export type LimitsSpec<L> = { [K in keyof L]: number };

/** `defaults` overlaid with `overrides`, validated (see the header). */
export function resolveLimits<L extends LimitsSpec<L>>(
  label: string,
  defaults: Readonly<L>,
  overrides: Partial<L> = {},
): L {
  const out = { ...defaults } as L;
  for (const [name, value] of Object.entries(overrides) as [keyof L & string, unknown][]) {
    if (value === undefined) continue;
    if (!Object.hasOwn(defaults, name)) throw new RangeError(`Unknown ${label} limit "${name}"`);
    if (typeof value !== "number" || !Number.isSafeInteger(value) || value <= 0) {
      throw new RangeError(`${label} limit "${name}" must be a positive integer: got ${value}`);
    }
    out[name] = value as L[keyof L & string];
  }
  return out;
}
