/**
 * The dashboard token, persisted: `<state-root>/token` holds one base64url token and a
 * line feed, 0600, so the tokenized URL (and the cookie it buys) survives restarts.
 *
 * Invariants:
 *  - the file is only ever written whole, through writeFileAtomic (a reader sees the old
 *    token or the new one, never a torn one);
 *  - it is only ever read through the contained reader (durable readInside: a real
 *    directory, a regular single-link file, O_NOFOLLOW | O_NONBLOCK, dev+ino re-checked),
 *    at most TOKEN_FILE_MAX_BYTES: a symlink, FIFO, device, hardlink or oversized file is
 *    never followed or read, it counts as no token;
 *  - no token or a malformed one (wrong alphabet, too short) is replaced by a fresh one
 *    (`loadOrCreateToken`); the rename replaces a planted symlink itself, never its target.
 *
 * Rotation (decision, issue 14): the file is the single source of truth. `intendant token
 * --rotate` writes a new one; a running daemon re-checks the file's identity (dev, ino,
 * size, mtime) every TOKEN_RECHECK_MS and adopts a valid new token, so the old one (and
 * every cookie holding it) stops working within that period — no IPC channel, no restart,
 * and an edit by hand works the same way. The rotate command then confirms by asking the
 * daemon with the new token. While the file is missing or invalid the daemon keeps its last
 * good token (it never fails open, and a half-done edit never locks the user out); the next
 * `intendant url` or `token` writes a fresh valid one, which the daemon then adopts.
 */
import { join } from "node:path";
import { ensurePrivateDirSync, readInside, writeFileAtomic } from "../durable/mod.ts";
import { newToken } from "./security.ts";

/** The file's name inside the state root. */
export const TOKEN_FILE_NAME = "token";
/** Longest token file read (a token is 43 characters; anything much longer is not one). */
export const TOKEN_FILE_MAX_BYTES = 512;
/** How often a running daemon looks for a rotated token. */
export const TOKEN_RECHECK_MS = 500;

/** base64url, 32 to 256 characters (newToken makes 43: 256 random bits). */
const TOKEN_GRAMMAR = /^[A-Za-z0-9_-]{32,256}$/;

/** `<stateRoot>/token`. */
export function tokenFilePath(stateRoot: string): string {
  return join(stateRoot, TOKEN_FILE_NAME);
}

/** What reading the token file found. */
export type TokenRead =
  | { ok: true; token: string }
  | { ok: false; reason: "missing" | "malformed" | "refused" };

/** Reads the token through the contained reader; never throws for a bad file. */
export async function readTokenFile(stateRoot: string): Promise<TokenRead> {
  const r = await readInside(stateRoot, TOKEN_FILE_NAME, {
    maxBytes: TOKEN_FILE_MAX_BYTES,
    hardlinks: "refuse",
  });
  if (!r.ok) {
    if (r.reason === "missing") return { ok: false, reason: "missing" };
    return { ok: false, reason: r.reason === "too_large" ? "malformed" : "refused" };
  }
  let text: string;
  try {
    text = new TextDecoder("utf-8", { fatal: true }).decode(r.bytes);
  } catch (err) {
    if (err instanceof TypeError) return { ok: false, reason: "malformed" };
    throw err;
  }
  const token = text.replace(/\r?\n$/, "");
  if (!TOKEN_GRAMMAR.test(token)) return { ok: false, reason: "malformed" };
  return { ok: true, token };
}

/**
 * The file's identity as the watcher compares it: dev, ino, size, mtime. null when there
 * is nothing (or a non-regular thing) there.
 */
export async function tokenFileIdentity(stateRoot: string): Promise<string | null> {
  try {
    const st = await Deno.lstat(tokenFilePath(stateRoot));
    if (!st.isFile) return null;
    return `${st.dev}:${st.ino}:${st.size}:${st.mtime?.getTime() ?? 0}`;
  } catch (err) {
    if (err instanceof Deno.errors.NotFound || err instanceof Deno.errors.NotADirectory) {
      return null;
    }
    throw err;
  }
}

/** Writes a fresh token (0600, atomically) and returns it. */
export async function rotateToken(stateRoot: string): Promise<string> {
  ensurePrivateDirSync(stateRoot);
  const token = newToken();
  await writeFileAtomic(tokenFilePath(stateRoot), token + "\n", { mode: 0o600 });
  return token;
}

/**
 * The persisted token, or a fresh one written in its place when it is missing, malformed
 * or refused; `replaced` says which (null: the file was good). Two processes creating at
 * once both rename a token in; the re-read returns whichever landed last, so both callers
 * agree with the file.
 */
export async function loadOrCreateToken(
  stateRoot: string,
): Promise<{ token: string; replaced: Exclude<TokenRead, { ok: true }>["reason"] | null }> {
  ensurePrivateDirSync(stateRoot);
  const first = await readTokenFile(stateRoot);
  if (first.ok) return { token: first.token, replaced: null };
  const token = await rotateToken(stateRoot);
  const again = await readTokenFile(stateRoot);
  return { token: again.ok ? again.token : token, replaced: first.reason };
}

/** A running daemon's view of the token file. */
export interface TokenWatch {
  /** The token requests must present now. */
  current(): string;
  /** Re-checks the file now (the timer calls this every TOKEN_RECHECK_MS). */
  check(): Promise<void>;
  /** Stops the timer and waits for a check in flight (its onChange included). */
  stop(): Promise<void>;
}

/** Options for {@link watchTokenFile}. */
export interface TokenWatchOptions {
  /** The token loaded at start (loadOrCreateToken). */
  initial: string;
  /** @default TOKEN_RECHECK_MS */
  intervalMs?: number;
  /** Called after a new token was adopted (the daemon rewrites daemon.json). */
  onChange?: (token: string) => void | Promise<void>;
  logger?: (line: string) => void;
}

/** Follows `<stateRoot>/token` (see the header for the policy). */
export function watchTokenFile(stateRoot: string, o: TokenWatchOptions): TokenWatch {
  let token = o.initial;
  let seen: string | null = null;
  let warned = false;
  let running: Promise<void> | null = null;
  const checkOnce = async () => {
    // The identity is taken BEFORE the read: a rotation landing in between leaves the old
    // identity recorded, so the next tick reads again instead of missing the new token.
    const identity = await tokenFileIdentity(stateRoot);
    if (identity !== null && identity === seen) return;
    const r = await readTokenFile(stateRoot);
    if (!r.ok) {
      // Keep the last good token; say so once per bad spell, not every tick.
      if (!warned) {
        o.logger?.(
          `intendant: the token file "${
            tokenFilePath(stateRoot)
          }" is ${r.reason}; the dashboard keeps its current token (\`intendant url\` writes a new one)`,
        );
      }
      warned = true;
      seen = null;
      return;
    }
    warned = false;
    seen = identity;
    if (r.token === token) return;
    token = r.token;
    await o.onChange?.(token);
  };
  const check = () => (running ??= checkOnce().finally(() => (running = null)));
  const timer = setInterval(() => {
    check().catch((err) =>
      o.logger?.(`intendant: cannot re-check the token file: ${(err as Error).message}`)
    );
  }, o.intervalMs ?? TOKEN_RECHECK_MS);
  Deno.unrefTimer(timer);
  return {
    current: () => token,
    check,
    stop: async () => {
      clearInterval(timer);
      await running?.catch(() => {/* reported by the tick that started it */});
    },
  };
}
