/**
 * SimFs: an in-memory Fs that models what survives a power loss (reliability-plan A3;
 * LevelDB's FaultInjectionTestEnv plus ALICE-lite reorderings). Used by the store's
 * power-loss test and, as a fast in-memory Fs, by the model-based store test.
 *
 * The model, per inode and per directory:
 *  - a file has live bytes and durable bytes (its content as of its last successful
 *    `sync()`); bytes written since are "unsynced";
 *  - a directory has live entries and durable entries; create/rename/unlink/mkdir append a
 *    pending op to the directory they change, and only `syncDir()` of that directory makes
 *    its pending ops durable (a failed syncDir makes nothing durable). A rename must stay
 *    inside one directory (the store never renames across directories).
 * `crashImage()` builds the disk a reboot would find, as a new SimFs with no pending
 * state, under one of these models:
 *  - "leveldb":  every pending op reverted, every unsynced byte dropped;
 *  - "prefix":   per directory, the first j pending ops survive (ordered metadata
 *                journaling, ext4 data=ordered), j random;
 *  - "subset":   per directory, any subset of pending ops survives (reordering);
 *  - "keep-all": every pending op survives but unsynced data may not (delayed allocation).
 * In the last three, each file's unsynced tail is dropped, kept, torn at a random byte or
 * zero-filled (ext4 data=writeback), chosen at random. Paths are absolute POSIX paths; the
 * image is a pure function of the state and the PRNG, so a failing state is replayable.
 * Invariant: with no crash, SimFs behaves like a POSIX file system for the Fs operations.
 */
import { posix } from "node:path";
import {
  type CappedRead,
  ContainedReadError,
  type Fs,
  type FsDirEntry,
  type FsStat,
  type FsWriteHandle,
} from "../../lib/durable/mod.ts";

/** A crash model of {@link SimFs.crashImage}. */
export type CrashModel = "leveldb" | "prefix" | "subset" | "keep-all";

type DirOp =
  | { kind: "link"; name: string; ino: number }
  | { kind: "unlink"; name: string }
  | { kind: "rename"; from: string; to: string; ino: number };

interface FileNode {
  kind: "file";
  ino: number;
  data: Uint8Array;
  durable: Uint8Array;
  mtimeMs: number;
}

interface DirNode {
  kind: "dir";
  ino: number;
  entries: Map<string, number>;
  durable: Map<string, number>;
  pending: DirOp[];
  mtimeMs: number;
}

type Node = FileNode | DirNode;

/** A mutating operation, reported to `onMutation` after it took effect. */
export interface SimOp {
  op:
    | "createNew"
    | "openAppend"
    | "writeAll"
    | "sync"
    | "close"
    | "rename"
    | "remove"
    | "mkdir"
    | "syncDir";
  path: string;
  to?: string;
}

/** Options for {@link SimFs}. */
export interface SimFsOptions {
  /** Clock for mtimes. @default Date.now */
  now?: () => number;
  /** Awaited after every mutating operation (crash-point enumeration). */
  onMutation?: (op: SimOp) => Promise<void> | void;
  /** Return an error to make the operation fail instead of running (fault injection). */
  fault?: (op: SimOp) => Error | null;
}

const ROOT_INO = 1;

/** An errno-shaped injected failure. */
export class SimFsError extends Error {
  readonly code: string;
  constructor(code: string, what: string) {
    super(`${code}: ${what}`);
    this.name = "SimFsError";
    this.code = code;
  }
}

export class SimFs implements Fs {
  #nodes = new Map<number, Node>();
  #nextIno = ROOT_INO + 1;
  #o: SimFsOptions;

  constructor(o: SimFsOptions = {}) {
    this.#o = o;
    this.#nodes.set(ROOT_INO, dirNode(ROOT_INO, 0));
  }

  /** Replaces the hooks (e.g. to start enumerating crash points after setup). */
  setHooks(o: Pick<SimFsOptions, "onMutation" | "fault">): void {
    this.#o = { ...this.#o, ...o };
  }

  #now(): number {
    return Math.floor((this.#o.now ?? Date.now)());
  }

  #split(path: string): string[] {
    if (!path.startsWith("/")) throw new TypeError(`SimFs needs absolute paths: got "${path}"`);
    return posix.normalize(path).split("/").filter((p) => p !== "");
  }

  #lookup(path: string): Node | null {
    let node: Node = this.#nodes.get(ROOT_INO)!;
    for (const part of this.#split(path)) {
      if (node.kind !== "dir") return null;
      const ino = node.entries.get(part);
      if (ino === undefined) return null;
      node = this.#nodes.get(ino)!;
    }
    return node;
  }

  #parent(path: string): { dir: DirNode; name: string } {
    const parts = this.#split(path);
    const name = parts.pop();
    if (name === undefined) throw new Deno.errors.PermissionDenied(`Cannot change "/"`);
    const dir = this.#lookup("/" + parts.join("/"));
    if (!dir) throw new Deno.errors.NotFound(`No such directory: "${posix.dirname(path)}"`);
    if (dir.kind !== "dir") throw new Deno.errors.NotADirectory(`Not a directory: "${path}"`);
    return { dir, name };
  }

  async #mutate(op: SimOp, apply: () => void): Promise<void> {
    const err = this.#o.fault?.(op);
    if (err) throw err;
    apply();
    await this.#o.onMutation?.(op);
  }

  #dirChange(dir: DirNode, op: DirOp): void {
    if (op.kind === "link") dir.entries.set(op.name, op.ino);
    else if (op.kind === "unlink") dir.entries.delete(op.name);
    else {
      dir.entries.delete(op.from);
      dir.entries.set(op.to, op.ino);
    }
    dir.pending.push(op);
    dir.mtimeMs = this.#now();
  }

  async createNew(path: string, _mode: number): Promise<FsWriteHandle> {
    let file: FileNode | null = null;
    await this.#mutate({ op: "createNew", path }, () => {
      const { dir, name } = this.#parent(path);
      if (dir.entries.has(name)) throw new Deno.errors.AlreadyExists(`File exists: "${path}"`);
      file = {
        kind: "file",
        ino: this.#nextIno++,
        data: new Uint8Array(0),
        durable: new Uint8Array(0),
        mtimeMs: this.#now(),
      };
      this.#nodes.set(file.ino, file);
      this.#dirChange(dir, { kind: "link", name, ino: file.ino });
    });
    return this.#handle(file! as FileNode, path);
  }

  async openAppend(path: string): Promise<FsWriteHandle> {
    let file: FileNode | null = null;
    await this.#mutate({ op: "openAppend", path }, () => {
      const n = this.#lookup(path);
      if (!n) throw new Deno.errors.NotFound(`No such file: "${path}"`);
      if (n.kind !== "file") throw new Deno.errors.IsADirectory(`Is a directory: "${path}"`);
      file = n;
    });
    return this.#handle(file! as FileNode, path);
  }

  /** A write handle on `f`: writes extend the live bytes, sync makes them durable. */
  #handle(f: FileNode, path: string): FsWriteHandle {
    let open = true;
    const guard = (what: string) => {
      if (!open) throw new Deno.errors.BadResource(`${what} on a closed handle of "${path}"`);
    };
    return {
      writeAll: (bytes) =>
        this.#mutate({ op: "writeAll", path }, () => {
          guard("write");
          const next = new Uint8Array(f.data.length + bytes.length);
          next.set(f.data);
          next.set(bytes, f.data.length);
          f.data = next;
          f.mtimeMs = this.#now();
        }),
      sync: () =>
        this.#mutate({ op: "sync", path }, () => {
          guard("sync");
          f.durable = f.data.slice();
        }),
      close: () => {
        guard("close");
        const err = this.#o.fault?.({ op: "close", path });
        open = false;
        if (err) throw err;
      },
    };
  }

  readFile(path: string): Promise<Uint8Array> {
    const n = this.#lookup(path);
    if (!n) return Promise.reject(new Deno.errors.NotFound(`No such file: "${path}"`));
    if (n.kind !== "file") {
      return Promise.reject(new Deno.errors.IsADirectory(`Is a directory: "${path}"`));
    }
    return Promise.resolve(n.data.slice());
  }

  /** Like readFile; the model has no symlinks or FIFOs, so only the cap can refuse. */
  async readFileCapped(path: string, maxBytes: number): Promise<CappedRead> {
    const n = this.#lookup(path);
    if (!n) throw new Deno.errors.NotFound(`No such file: "${path}"`);
    if (n.kind !== "file") throw new ContainedReadError(path, "not_regular");
    if (n.data.length > maxBytes) throw new ContainedReadError(path, "too_large");
    return { bytes: n.data.slice(), stat: await this.stat(path) };
  }

  rename(from: string, to: string): Promise<void> {
    return this.#mutate({ op: "rename", path: from, to }, () => {
      const a = this.#parent(from);
      const b = this.#parent(to);
      if (a.dir !== b.dir) throw new SimFsError("EXDEV", "SimFs renames within one directory only");
      const ino = a.dir.entries.get(a.name);
      if (ino === undefined) throw new Deno.errors.NotFound(`No such file: "${from}"`);
      const target = b.dir.entries.get(b.name);
      if (target !== undefined && this.#nodes.get(target)!.kind === "dir") {
        throw new Deno.errors.IsADirectory(`Is a directory: "${to}"`);
      }
      this.#dirChange(a.dir, { kind: "rename", from: a.name, to: b.name, ino });
    });
  }

  remove(path: string): Promise<void> {
    return this.#mutate({ op: "remove", path }, () => {
      const { dir, name } = this.#parent(path);
      const ino = dir.entries.get(name);
      if (ino === undefined) throw new Deno.errors.NotFound(`No such file: "${path}"`);
      const n = this.#nodes.get(ino)!;
      if (n.kind === "dir" && n.entries.size > 0) {
        throw new SimFsError("ENOTEMPTY", `Directory not empty: "${path}"`);
      }
      this.#dirChange(dir, { kind: "unlink", name });
    });
  }

  stat(path: string): Promise<FsStat> {
    const n = this.#lookup(path);
    if (!n) return Promise.reject(new Deno.errors.NotFound(`No such file: "${path}"`));
    return Promise.resolve({
      isFile: n.kind === "file",
      isDirectory: n.kind === "dir",
      isSymlink: false,
      size: n.kind === "file" ? n.data.length : 4096,
      mtimeMs: n.mtimeMs,
      dev: 4242,
      ino: n.ino,
    });
  }

  lstat(path: string): Promise<FsStat> {
    return this.stat(path);
  }

  readDir(path: string): Promise<FsDirEntry[]> {
    const n = this.#lookup(path);
    if (!n) return Promise.reject(new Deno.errors.NotFound(`No such directory: "${path}"`));
    if (n.kind !== "dir") {
      return Promise.reject(new Deno.errors.NotADirectory(`Not a directory: "${path}"`));
    }
    return Promise.resolve([...n.entries].map(([name, ino]) => {
      const kind = this.#nodes.get(ino)!.kind;
      return { name, isFile: kind === "file", isDirectory: kind === "dir", isSymlink: false };
    }));
  }

  async mkdir(path: string, _mode: number): Promise<void> {
    // Recursive, like realFs.mkdir: one pending link per created component.
    const parts = this.#split(path);
    for (let i = 1; i <= parts.length; i++) {
      const sub = "/" + parts.slice(0, i).join("/");
      const n = this.#lookup(sub);
      if (n) {
        if (n.kind !== "dir") throw new Deno.errors.AlreadyExists(`Not a directory: "${sub}"`);
        continue;
      }
      await this.#mutate({ op: "mkdir", path: sub }, () => {
        const { dir, name } = this.#parent(sub);
        const d = dirNode(this.#nextIno++, this.#now());
        this.#nodes.set(d.ino, d);
        this.#dirChange(dir, { kind: "link", name, ino: d.ino });
      });
    }
  }

  syncDir(path: string): Promise<void> {
    return this.#mutate({ op: "syncDir", path }, () => {
      const n = this.#lookup(path);
      if (!n) throw new Deno.errors.NotFound(`No such directory: "${path}"`);
      if (n.kind !== "dir") throw new Deno.errors.NotADirectory(`Not a directory: "${path}"`);
      n.durable = new Map(n.entries);
      n.pending = [];
    });
  }

  /** Creates `path` (and parents) and makes it durable at once: pre-existing state. */
  async mkdirDurable(path: string): Promise<void> {
    await this.mkdir(path, 0o700);
    const parts = this.#split(path);
    for (let i = 0; i <= parts.length; i++) await this.syncDir("/" + parts.slice(0, i).join("/"));
  }

  /** Pending (un-fsynced) directory operations, over all directories. */
  pendingOps(): number {
    let n = 0;
    for (const node of this.#nodes.values()) if (node.kind === "dir") n += node.pending.length;
    return n;
  }

  /** The disk a reboot would find under `model` (see the module header). */
  crashImage(model: CrashModel, rnd: () => number, o: Pick<SimFsOptions, "now"> = {}): SimFs {
    const img = new SimFs({ now: o.now ?? this.#o.now });
    const seen = new Map<number, number>(); // our ino → image ino
    const copy = (node: Node): Node => {
      const done = seen.get(node.ino);
      if (done !== undefined) return img.#nodes.get(done)!;
      if (node.kind === "file") {
        const f: FileNode = {
          kind: "file",
          ino: node.ino,
          data: surviving(node, model, rnd),
          durable: new Uint8Array(0),
          mtimeMs: node.mtimeMs,
        };
        f.durable = f.data;
        img.#nodes.set(f.ino, f);
        seen.set(node.ino, f.ino);
        return f;
      }
      const d = dirNode(node.ino, node.mtimeMs);
      img.#nodes.set(d.ino, d);
      seen.set(node.ino, d.ino);
      const entries = new Map(node.durable);
      for (const op of survivingOps(node.pending, model, rnd)) applyOp(entries, op);
      for (const [name, ino] of [...entries].sort(([a], [b]) => (a < b ? -1 : 1))) {
        const child = this.#nodes.get(ino);
        if (child) d.entries.set(name, copy(child).ino);
      }
      d.durable = new Map(d.entries);
      return d;
    };
    const root = copy(this.#nodes.get(ROOT_INO)!);
    img.#nodes.set(ROOT_INO, root);
    img.#nextIno = this.#nextIno;
    return img;
  }

  /** A stable digest of the live tree (paths, kinds, bytes): equal trees, equal digests. */
  digest(): string {
    const parts: string[] = [];
    const walk = (path: string, node: Node) => {
      if (node.kind === "file") {
        parts.push(`${path}:${node.data.length}:${fnv(node.data)}`);
        return;
      }
      parts.push(`${path}/`);
      for (const [name, ino] of [...node.entries].sort(([a], [b]) => (a < b ? -1 : 1))) {
        walk(`${path}/${name}`, this.#nodes.get(ino)!);
      }
    };
    walk("", this.#nodes.get(ROOT_INO)!);
    return parts.join("\n");
  }

  /** Live files under `dir` (names only, non-recursive). */
  list(dir: string): string[] {
    const n = this.#lookup(dir);
    return n?.kind === "dir" ? [...n.entries.keys()].sort() : [];
  }
}

function dirNode(ino: number, mtimeMs: number): DirNode {
  return { kind: "dir", ino, entries: new Map(), durable: new Map(), pending: [], mtimeMs };
}

function applyOp(entries: Map<string, number>, op: DirOp): void {
  if (op.kind === "link") entries.set(op.name, op.ino);
  else if (op.kind === "unlink") entries.delete(op.name);
  else {
    entries.delete(op.from);
    entries.set(op.to, op.ino);
  }
}

function survivingOps(pending: DirOp[], model: CrashModel, rnd: () => number): DirOp[] {
  if (pending.length === 0 || model === "leveldb") return [];
  if (model === "keep-all") return pending;
  if (model === "prefix") return pending.slice(0, Math.floor(rnd() * (pending.length + 1)));
  return pending.filter(() => rnd() < 0.5);
}

function surviving(f: FileNode, model: CrashModel, rnd: () => number): Uint8Array {
  const extends_ = f.data.length >= f.durable.length &&
    f.durable.every((b, i) => b === f.data[i]);
  if (model === "leveldb" || f.data.length === f.durable.length && extends_) {
    return f.durable.slice();
  }
  if (!extends_) return (rnd() < 0.5 ? f.durable : f.data).slice();
  const tail = f.data.length - f.durable.length;
  const pick = rnd();
  if (pick < 0.25) return f.durable.slice();
  if (pick < 0.5) return f.data.slice();
  if (pick < 0.75) return f.data.slice(0, f.durable.length + Math.floor(rnd() * tail));
  const out = new Uint8Array(f.data.length);
  out.set(f.durable);
  return out;
}

/** FNV-1a over bytes: a cheap content digest for deduplicating crash states. */
function fnv(bytes: Uint8Array): string {
  let h = 0x811c9dc5;
  for (const b of bytes) h = Math.imul(h ^ b, 0x01000193) >>> 0;
  return h.toString(16);
}
