/**
 * The password file (~/.pgpass or $PGPASSFILE) with libpq's documented semantics, pure:
 * the caller (lib/config.ts) reads the file and passes its text and mode.
 *
 * Format, one entry a line: `hostname:port:database:username:password`.
 *  - a line starting with `#` is a comment; empty lines are skipped; a trailing CR is
 *    dropped (a file edited on Windows still matches);
 *  - a field that is exactly `*` matches anything; `\:` is a literal colon and `\\` a
 *    literal backslash (a backslash makes any next character literal, as in libpq);
 *  - the first matching line wins; the password runs to the next unescaped `:` or the
 *    end of the line, de-escaped;
 *  - a line with fewer than five fields never matches (libpq skips it silently).
 * Mode: libpq ignores the file when it is not a regular file or grants any group or world
 * permission (mode & 0o077), printing a warning. We do the same: the lookup answers null
 * and a warning line (libpq's wording) is returned for the caller to print. A null mode
 * (a platform without POSIX modes) skips the check, as libpq does on Windows.
 * Matching compares the host exactly as given in the URL (an IPv6 host without its
 * brackets, so a pgpass line writes it `\:\:1`) and the port as its decimal number.
 * Invariant: no function here puts a password in a message.
 */

/** The password file as the caller read it. */
export interface PgpassFile {
  /** Where it was read (for the warning line). */
  path: string;
  text: string;
  /** `stat().mode`, or null where the platform has none. */
  mode: number | null;
  /** False when the path is not a regular file (libpq ignores it with a warning). */
  isFile?: boolean;
}

/** What the lookup is for. */
export interface PgpassQuery {
  host: string;
  port: number;
  database: string;
  user: string;
}

/** The lookup's answer: the password (or null) and the warnings to print. */
export interface PgpassLookup {
  password: string | null;
  warnings: string[];
}

/**
 * Matches one field at the start of `line` from `at` against `want`; returns the index
 * after the field's closing `:`, or -1 (libpq's pwdfMatchesString).
 */
function matchField(line: string, at: number, want: string): number {
  if (line[at] === "*" && line[at + 1] === ":") return at + 2;
  let i = at;
  let j = 0;
  while (i < line.length) {
    let escaped = false;
    if (line[i] === "\\") {
      i++;
      escaped = true;
      // A backslash at the very end escapes nothing: the field has no closing colon.
      if (i >= line.length) return -1;
    }
    if (line[i] === ":" && !escaped && j === want.length) return i + 1;
    if (j >= want.length || line[i] !== want[j]) return -1;
    i++;
    j++;
  }
  return -1;
}

/** The password field from `at`: up to the next unescaped `:`, de-escaped. */
function passwordField(line: string, at: number): string {
  let out = "";
  for (let i = at; i < line.length && line[i] !== ":"; i++) {
    if (line[i] === "\\" && i + 1 < line.length) i++;
    out += line[i];
  }
  return out;
}

/** Looks `q` up in `file` (see the header). Never throws on file content. */
export function lookupPgpass(file: PgpassFile | null, q: PgpassQuery): PgpassLookup {
  if (file === null) return { password: null, warnings: [] };
  if (file.isFile === false) {
    return {
      password: null,
      warnings: [`WARNING: password file ${JSON.stringify(file.path)} is not a plain file`],
    };
  }
  if (file.mode !== null && (file.mode & 0o077) !== 0) {
    return {
      password: null,
      warnings: [
        `WARNING: password file ${
          JSON.stringify(file.path)
        } has group or world access; permissions should be u=rw (0600) or less`,
      ],
    };
  }
  const want = [q.host, String(q.port), q.database, q.user];
  for (const raw of file.text.split("\n")) {
    const line = raw.endsWith("\r") ? raw.slice(0, -1) : raw;
    if (line === "" || line.startsWith("#")) continue;
    let at = 0;
    for (const w of want) {
      at = matchField(line, at, w);
      if (at < 0) break;
    }
    if (at < 0) continue;
    return { password: passwordField(line, at), warnings: [] };
  }
  return { password: null, warnings: [] };
}
