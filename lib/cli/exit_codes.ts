/**
 * Process exit codes, documented in the README. Distinct per failure class so scripts
 * can react without parsing messages.
 */
export const EXIT_OK = 0;
/** A runtime failure (I/O, crashed session). */
export const EXIT_FAILURE = 1;
/** Bad usage: unknown flag, missing argument, invalid input file. */
export const EXIT_USAGE = 2;
/** The named session or file does not exist. */
export const EXIT_NOT_FOUND = 3;
/** A session prefix matched several sessions. */
export const EXIT_AMBIGUOUS = 4;
/** The session ended failed or interrupted. */
export const EXIT_SESSION_FAILED = 5;
/** Another process holds a lock we need, or the port is busy. */
export const EXIT_BUSY = 6;
/** An uncaught internal error (EX_SOFTWARE). */
export const EXIT_INTERNAL = 70;
