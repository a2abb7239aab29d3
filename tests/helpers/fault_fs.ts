/**
 * A fault-injecting Fs for crash tests (LevelDB's FaultInjectionTestEnv, minus the power
 * loss model). Wraps another Fs (realFs by default), numbers every operation — including
 * the handle operations writeAll/sync/close — and, when armed, at operation k either
 * SIGKILLs the whole process *before* the operation runs, or throws an errno-like error
 * instead of running it. Operations are counted from 1 after the last `arm()`/`reset()`.
 * Invariant: an unarmed FaultFs behaves exactly like the Fs it wraps.
 */
import type { Fs, FsWriteHandle } from "../../lib/durable/mod.ts";
import { realFs } from "../../lib/durable/mod.ts";

/** The operations counted. */
export type FsOpName =
  | "createNew"
  | "openAppend"
  | "writeAll"
  | "sync"
  | "close"
  | "readFile"
  | "rename"
  | "remove"
  | "stat"
  | "lstat"
  | "readDir"
  | "mkdir"
  | "syncDir";

/** One counted operation. `path` of a handle operation is the created file's path. */
export interface FsOp {
  n: number;
  op: FsOpName;
  path: string;
  to?: string;
}

/** The errnos the plan injects. */
export const ERRNOS = ["ENOSPC", "EIO", "EDQUOT", "EMFILE", "EXDEV"] as const;
export type Errno = (typeof ERRNOS)[number];

/** An injected failure, shaped like a Node/Deno errno error (`code`, `errno`). */
export class InjectedFsError extends Error {
  readonly code: Errno;
  constructor(code: Errno, op: FsOp) {
    super(`${code}: injected failure on ${op.op} "${op.path}" (op ${op.n})`);
    this.name = "InjectedFsError";
    this.code = code;
  }
}

/** When and how to fail. Without `at`, `match` alone picks the operation(s). */
export interface FaultPlan {
  /** 1-based operation number since arm(). */
  at?: number;
  /** Extra (or sole) condition on the operation. */
  match?: (op: FsOp) => boolean;
  action: "kill" | Errno;
  /** Keep failing every later matching op too (a full disk stays full). @default false */
  sticky?: boolean;
}

/** The wrapper. `ops` logs every operation since the last arm()/reset(). */
export class FaultFs implements Fs {
  readonly ops: FsOp[] = [];
  #inner: Fs;
  #plan: FaultPlan | null = null;
  #fired = false;

  constructor(inner: Fs = realFs) {
    this.#inner = inner;
  }

  /** Starts counting from 1 with `plan` (null: count only). */
  arm(plan: FaultPlan | null): void {
    this.ops.length = 0;
    this.#plan = plan;
    this.#fired = false;
  }

  reset(): void {
    this.arm(null);
  }

  /** Whether a fault fired since arm(). */
  get fired(): boolean {
    return this.#fired;
  }

  #gate(op: FsOpName, path: string, to?: string): void {
    const rec: FsOp = { n: this.ops.length + 1, op, path, ...(to ? { to } : {}) };
    this.ops.push(rec);
    const p = this.#plan;
    if (!p || (this.#fired && !p.sticky)) return;
    const atOk = p.at === undefined ? true : p.sticky ? rec.n >= p.at : rec.n === p.at;
    if (!atOk || (p.match && !p.match(rec))) return;
    this.#fired = true;
    if (p.action === "kill") Deno.kill(Deno.pid, "SIGKILL");
    else throw new InjectedFsError(p.action, rec);
  }

  async createNew(path: string, mode: number): Promise<FsWriteHandle> {
    this.#gate("createNew", path);
    return this.#wrap(await this.#inner.createNew(path, mode), path);
  }

  async openAppend(path: string): Promise<FsWriteHandle> {
    this.#gate("openAppend", path);
    return this.#wrap(await this.#inner.openAppend(path), path);
  }

  #wrap(h: FsWriteHandle, path: string): FsWriteHandle {
    return {
      writeAll: async (bytes) => {
        this.#gate("writeAll", path);
        await h.writeAll(bytes);
      },
      sync: async () => {
        this.#gate("sync", path);
        await h.sync();
      },
      close: () => {
        try {
          this.#gate("close", path);
        } catch (err) {
          // close(2) releases the fd even when it reports an error; so does the fake.
          h.close();
          throw err;
        }
        h.close();
      },
    };
  }

  async readFile(path: string) {
    this.#gate("readFile", path);
    return await this.#inner.readFile(path);
  }
  // The same gate as readFile: a capped read is one read op to the fault schedule.
  async readFileCapped(path: string, maxBytes: number) {
    this.#gate("readFile", path);
    return await this.#inner.readFileCapped(path, maxBytes);
  }
  async rename(from: string, to: string) {
    this.#gate("rename", from, to);
    await this.#inner.rename(from, to);
  }
  async remove(path: string) {
    this.#gate("remove", path);
    await this.#inner.remove(path);
  }
  async stat(path: string) {
    this.#gate("stat", path);
    return await this.#inner.stat(path);
  }
  async lstat(path: string) {
    this.#gate("lstat", path);
    return await this.#inner.lstat(path);
  }
  async readDir(path: string) {
    this.#gate("readDir", path);
    return await this.#inner.readDir(path);
  }
  async mkdir(path: string, mode: number) {
    this.#gate("mkdir", path);
    await this.#inner.mkdir(path, mode);
  }
  async syncDir(path: string) {
    this.#gate("syncDir", path);
    await this.#inner.syncDir(path);
  }
}

/**
 * `inner` with fsync and directory fsync turned into no-ops, for logic tests that run
 * thousands of publishes and do not test durability (each fsync costs ~10 ms here).
 */
export function withoutSync(inner: Fs = realFs): Fs {
  return {
    ...inner,
    async createNew(path, mode) {
      return noSync(await inner.createNew(path, mode));
    },
    async openAppend(path) {
      return noSync(await inner.openAppend(path));
    },
    syncDir: () => Promise.resolve(),
  };
}

function noSync(h: FsWriteHandle): FsWriteHandle {
  return { writeAll: (b) => h.writeAll(b), sync: () => Promise.resolve(), close: () => h.close() };
}
