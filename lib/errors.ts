/**
 * The few domain errors a caller reacts to differently. Everything else uses the
 * built-ins (TypeError, RangeError, SyntaxError). Each class sets `name` and passes
 * `cause`; messages are sentence case with quoted values and no trailing period.
 */

/** A session, record or file the caller named does not exist. */
export class NotFoundError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = "NotFoundError";
  }
}

/** An id prefix matched more than one session. `candidates` lists the full ids. */
export class AmbiguousPrefixError extends Error {
  readonly candidates: readonly string[];
  constructor(prefix: string, candidates: readonly string[], options?: ErrorOptions) {
    const shown = candidates.slice(0, 8).map((c) => `"${c}"`).join(", ");
    const more = candidates.length > 8 ? ` and ${candidates.length - 8} more` : "";
    super(`Session prefix "${prefix}" is ambiguous: matches ${shown}${more}`, options);
    this.name = "AmbiguousPrefixError";
    this.candidates = candidates;
  }
}

/** Input that a user or another program wrote is not valid (script, flag, file). */
export class InvalidInputError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = "InvalidInputError";
  }
}

/**
 * A kept session that cannot be written back in place: its agent keeps sessions as rows
 * of a database (OpenCode, Goose), and a database cannot be restored file by file. An
 * InvalidInputError, so HTTP answers 400 with the sentence; the CLI prints the one line
 * and exits 1 (the command line was fine: what it asks cannot be done there).
 */
export class NotRestorableError extends InvalidInputError {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = "NotRestorableError";
  }
}

/** The store's writer lock is held by a live writer. */
export class LockHeldError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = "LockHeldError";
  }
}

/** manifest.json does not parse or validate; the store quarantines it. */
export class ManifestCorruptError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = "ManifestCorruptError";
  }
}

/** A publish lost a race against a newer writer and was rejected. */
export class StalePublishError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = "StalePublishError";
  }
}

/** A path would leave the directory it must stay inside (symlink, `..`, hostile name). */
export class ContainmentError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = "ContainmentError";
  }
}
