/**
 * Page order and scan order. Page order: groups by best-hit ts_ms descending, ties by
 * session key ascending — a total order, so a position (best, key) splits every result
 * set into "before" and "after" and a cursor can resume strictly after it. Scan order:
 * sessions by the manifest's newest_ts_ms descending, ties by key ascending, computed
 * once per manifest revision. Since a group's best hit is never newer than its session's
 * newest record nor older than its oldest, both orders bound each other: that is what the
 * early exit, the cursor skip and the budget cut's "safe prefix" rely on.
 */
import type { Manifest, ManifestEntry } from "../store/mod.ts";
import { fold } from "./fold.ts";
import type { CursorPosition } from "./search_cursor.ts";
import type { SessionMatch } from "./session_scan.ts";

/** One session in scan order. */
export interface PlanSession {
  key: string;
  entry: ManifestEntry;
  /** fold(meta.project), for the project filter. */
  project: string | null;
}

/** The scan order of one manifest revision. */
export interface ScanPlan {
  revision: number;
  sessions: PlanSession[];
  keys: ReadonlySet<string>;
}

/** A session that matched, waiting to be rendered. */
export interface Candidate {
  session: PlanSession;
  match: SessionMatch;
  /** (match.best, session.key): the group's place in page order. */
  pos: CursorPosition;
}

/** True when position `a` comes before `b` in page order. */
export function before(a: CursorPosition, b: CursorPosition): boolean {
  return a.best !== b.best ? a.best > b.best : a.key < b.key;
}

/** Builds the scan order of `m`. */
export function buildPlan(m: Manifest): ScanPlan {
  const sessions: PlanSession[] = [];
  for (const [key, entry] of Object.entries(m.sessions)) {
    const p = entry.meta.project;
    sessions.push({ key, entry, project: p === null ? null : fold(p) });
  }
  sessions.sort((a, b) =>
    b.entry.newest_ts_ms - a.entry.newest_ts_ms || (a.key < b.key ? -1 : a.key > b.key ? 1 : 0)
  );
  return { revision: m.revision, sessions, keys: new Set(sessions.map((s) => s.key)) };
}

/** The best `cap` candidates seen so far, in page order. */
export class PageBuffer {
  readonly items: Candidate[] = [];
  readonly #cap: number;

  constructor(cap: number) {
    this.#cap = cap;
  }

  get full(): boolean {
    return this.items.length >= this.#cap;
  }

  /** The last (worst) kept candidate. */
  get last(): Candidate | undefined {
    return this.items.at(-1);
  }

  insert(c: Candidate): void {
    const it = this.items;
    let at = it.length;
    while (at > 0 && before(c.pos, it[at - 1]!.pos)) at--;
    if (at >= this.#cap) return;
    it.splice(at, 0, c);
    if (it.length > this.#cap) it.pop();
  }
}
