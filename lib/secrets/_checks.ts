/**
 * Value checks shared by the secret rules: Shannon entropy, character classes and the
 * placeholder test. Pure functions over strings; no I/O, no Deno/node APIs (the UI bundle
 * imports the masker).
 * Why two placeholder tests: provider formats (ghp_…, AKIA…) carry random bodies, so only
 * STRUCTURAL tells mark a placeholder there (a run of one character, "EXAMPLE" at the end,
 * a low-entropy body); a word test ("your", "example") on a random 36-character body would
 * fire by chance now and then. Generic `password=` values are typed by people, so there
 * the word test applies too.
 */

/** Shannon entropy of `s` in bits per character (0 for ""). */
export function shannonEntropy(s: string): number {
  if (s.length === 0) return 0;
  const counts = new Map<string, number>();
  for (const ch of s) counts.set(ch, (counts.get(ch) ?? 0) + 1);
  let bits = 0;
  const n = [...s].length;
  for (const c of counts.values()) {
    const p = c / n;
    bits -= p * Math.log2(p);
  }
  return bits;
}

/** How many of lower, upper, digit and other (symbol) classes `s` uses: 0–4. */
export function charClasses(s: string): number {
  let lower = 0, upper = 0, digit = 0, other = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c >= 97 && c <= 122) lower = 1;
    else if (c >= 65 && c <= 90) upper = 1;
    else if (c >= 48 && c <= 57) digit = 1;
    else other = 1;
  }
  return lower + upper + digit + other;
}

/** How many of lower, upper and digit `s` uses: 0–3. */
export function alnumClasses(s: string): number {
  return (/[a-z]/.test(s) ? 1 : 0) + (/[A-Z]/.test(s) ? 1 : 0) + (/[0-9]/.test(s) ? 1 : 0);
}

/** True when `s` contains at least one ASCII digit. */
export function hasDigit(s: string): boolean {
  return /[0-9]/.test(s);
}

// Six of one character in a row ("xxxxxx", "000000", "******") never happens by chance in
// a random base62 body of provider length (p ≈ 3e-8 per position) but is how people pad
// placeholders.
const RUN_OF_SIX = /(.)\1{5}/i;

/** Structural placeholder tells, safe to apply to random provider bodies. */
export function looksStructuralPlaceholder(body: string): boolean {
  if (RUN_OF_SIX.test(body)) return true;
  // AWS documents its example keys with an EXAMPLE suffix (AKIAIOSFODNN7EXAMPLE,
  // wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY); gitleaks allowlists the same shape.
  if (/EXAMPLE(KEY)?$/.test(body)) return true;
  if (body.includes("...") || body.includes("…") || body.includes("***")) return true;
  return false;
}

/** A reference to a value held elsewhere: `$VAR`, `${VAR}`, `{{ var }}`, `<token>`, `%(x)s`. */
export function looksReference(value: string): boolean {
  if (/^[<[{($%]/.test(value) || /[>\]})]$/.test(value)) return true;
  return value.includes("${") || value.includes("{{");
}

// Words of five letters or more, or anchored: a short unanchored word ("fake", "xxx")
// turns up by chance in a random value about once in a few thousand.
const PLACEHOLDER_WORDS =
  /^(?:your|my|the|some|a)[_-]|[_-]here$|example|placeholder|redacted|changeme|change_me|dummy|sample|insert|replace|^x+$|^(?:none|null|nil|undefined|true|false|string|number|secret|password|token|test|admin)$/i;

/**
 * Placeholder or reference instead of a value: words people type in docs ("your_api_key",
 * "changeme", "<token>"), masks ("****"), and references to a value held elsewhere
 * (`$VAR`, `${VAR}`, `{{ var }}`, `%(name)s`, an environment member lookup, a function call).
 */
export function looksPlaceholderValue(value: string): boolean {
  if (looksStructuralPlaceholder(value)) return true;
  if (PLACEHOLDER_WORDS.test(value)) return true;
  if (looksReference(value) || value.includes("(")) return true;
  // A dotted member access (an env object's API_KEY member, config.password, self.secret) names a
  // value; it is not one.
  if (/^[A-Za-z_$][\w$]*(\.[A-Za-z_$][\w$]*)+$/.test(value)) return true;
  return false;
}
