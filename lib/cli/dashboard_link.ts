/**
 * The dashboard link as the CLI reports it (`intendant url [SESSION]`, `intendant token
 * --rotate`): which port it names (the running daemon's, from daemon.json, or the
 * configured one) and whether the daemon accepts a token. daemon.json is only a hint (a crash leaves it, a
 * port is reused), so acceptance is asked of the daemon itself: `GET /api/routes` with
 * the token as a bearer — 200 accepts, 401 rejects, no connection means no daemon. A
 * profile without network permission for the port answers "unknown": the caller then
 * trusts daemon.json. A rotation is picked up by the daemon within TOKEN_RECHECK_MS, so
 * `waitForAcceptance` asks a few times before it concludes.
 */
import { type DaemonFile, readDaemonFile, TOKEN_RECHECK_MS } from "../server/mod.ts";

/** What the daemon said to a token. */
export type Acceptance = "accepts" | "rejects" | "absent" | "unknown";

/** How long one probe may take: a loopback answer takes milliseconds. */
const PROBE_TIMEOUT_MS = 2_000;

/**
 * The tokenized URL for `port`; with `sessionKey`, a link that opens that session's detail
 * (the dashboard's `#/session/<encoded key>` route, ui/lib/route.ts sessionHref: the
 * fragment never reaches the server and survives the token trade's redirect).
 */
export function dashboardUrl(port: number, token: string, sessionKey?: string): string {
  const base = `http://127.0.0.1:${port}/?token=${token}`;
  return sessionKey === undefined ? base : `${base}#/session/${encodeURIComponent(sessionKey)}`;
}

/** Asks the daemon on `port` whether it accepts `token`. */
export async function probeToken(port: number, token: string): Promise<Acceptance> {
  let res: Response;
  try {
    res = await fetch(`http://127.0.0.1:${port}/api/routes`, {
      headers: { authorization: `Bearer ${token}`, accept: "application/json" },
      signal: AbortSignal.timeout(PROBE_TIMEOUT_MS),
    });
  } catch (err) {
    if (err instanceof Deno.errors.NotCapable || err instanceof Deno.errors.PermissionDenied) {
      return "unknown";
    }
    // Connection refused or reset, or the timeout: nobody (usable) is there.
    if (err instanceof TypeError || (err instanceof DOMException)) return "absent";
    throw err;
  }
  await res.body?.cancel();
  if (res.status === 200) return "accepts";
  if (res.status === 401) return "rejects";
  return "unknown";
}

/** Probes until the daemon accepts `token` or `timeoutMs` passes; the last answer. */
export async function waitForAcceptance(
  port: number,
  token: string,
  o: { timeoutMs?: number } = {},
): Promise<Acceptance> {
  const deadline = Date.now() + (o.timeoutMs ?? 3 * TOKEN_RECHECK_MS + 500);
  for (;;) {
    const a = await probeToken(port, token);
    if (a !== "rejects" || Date.now() >= deadline) return a;
    await new Promise((r) => setTimeout(r, TOKEN_RECHECK_MS / 5));
  }
}

/** The running daemon of a state root, when daemon.json names one that answers. */
export async function runningDaemon(daemonJsonPath: string): Promise<DaemonFile | null> {
  const d = await readDaemonFile(daemonJsonPath);
  if (!d) return null;
  return (await probeToken(d.port, d.token)) === "absent" ? null : d;
}
