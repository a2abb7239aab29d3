/**
 * A17: kill -9 at every file-system operation of a vault write — a session's first
 * sight, an append (a new tail chunk), a rewrite (a new version) and a prune of the disk
 * budget — then the next process's recovery (Keeper: recover() once, then the keep).
 * After each kill: every catalog parses, every object a catalog names exists and matches
 * its hash, no version is torn or counted twice (the catalog is the old one or the new
 * one, whole); after recovery: no temps left, the vault converges to what an
 * uninterrupted write gives, and a restore is byte-identical to the agent's file.
 * The child is tests/helpers/vault_child.ts (a FaultFs kills it before op k).
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { figure } from "./helpers/figures.ts";
import { withTempDir } from "./helpers/temp.ts";
import {
  type Catalog,
  type KeepUnit,
  latest,
  restoreSession,
  Vault,
  vaultStatus,
} from "../lib/vault/mod.ts";
import { parseTempName } from "../lib/durable/mod.ts";

const CHILD = new URL("./helpers/vault_child.ts", import.meta.url).pathname;

/** Claude-Code-shaped lines, distinct per seed. */
function lines(seed: number, n: number): string {
  let s = "";
  for (let i = 0; i < n; i++) {
    s += JSON.stringify({
      type: i % 2 ? "assistant" : "user",
      uuid: crypto.randomUUID(),
      parentUuid: null,
      sessionId: "5b1c2d3e-4f50-4a6b-8c7d-9e0f1a2b3c4d",
      timestamp: new Date(1_764_000_000_000 + (seed * 1000 + i) * 1000).toISOString(),
      message: {
        role: i % 2 ? "assistant" : "user",
        content: [{ type: "text", text: `seed ${seed} turn ${i} ${crypto.randomUUID()}` }],
      },
    }) + "\n";
  }
  return s;
}

const ID = "5b1c2d3e-4f50-4a6b-8c7d-9e0f1a2b3c4d";

function unitIn(root: string): KeepUnit {
  const proj = join(root, "home", ".claude", "projects", "-home-dev-shop");
  return {
    key: `claude-code:${ID}`,
    source: "claude-code",
    sessionId: ID,
    files: [
      { path: join(proj, `${ID}.jsonl`), role: "main" },
      { path: join(proj, ID, "subagents", "agent-a1.jsonl"), role: "subagent" },
    ],
  };
}

async function copyTree(from: string, to: string): Promise<void> {
  const p = await new Deno.Command("cp", { args: ["-a", from, to] }).output();
  assert.equal(p.code, 0, new TextDecoder().decode(p.stderr));
}

interface Phase {
  name: string;
  /** Builds the state before the write in `root` (agent files + vault). */
  setup(root: string): Promise<void>;
  job(root: string): { op: "keep"; unit: KeepUnit } | { op: "prune"; maxBytes: number };
}

const PRUNE_OTHER = "claude-code:0a0b0c0d-1111-4222-8333-444455556666";

const PHASES: Phase[] = [
  {
    name: "first sight",
    async setup(root) {
      const u = unitIn(root);
      await Deno.mkdir(join(u.files[1]!.path, ".."), { recursive: true });
      await Deno.writeTextFile(u.files[0]!.path, lines(1, 400));
      await Deno.writeTextFile(u.files[1]!.path, lines(2, 40));
    },
    job: (root) => ({ op: "keep", unit: unitIn(root) }),
  },
  {
    name: "append",
    async setup(root) {
      await PHASES[0]!.setup(root);
      await new Vault({ dir: join(root, "vault") }).keep([unitIn(root)]);
      await Deno.writeTextFile(unitIn(root).files[0]!.path, lines(3, 30), { append: true });
    },
    job: (root) => ({ op: "keep", unit: unitIn(root) }),
  },
  {
    name: "rewrite",
    async setup(root) {
      await PHASES[0]!.setup(root);
      await new Vault({ dir: join(root, "vault") }).keep([unitIn(root)]);
      // A compaction-style rewrite: shorter, different bytes from the start.
      await Deno.writeTextFile(unitIn(root).files[0]!.path, lines(4, 120));
    },
    job: (root) => ({ op: "keep", unit: unitIn(root) }),
  },
  {
    name: "prune",
    async setup(root) {
      await PHASES[2]!.setup(root);
      const vault = new Vault({ dir: join(root, "vault") });
      await vault.keep([unitIn(root)]);
      // A second session, kept and then deleted by its agent.
      const other = join(root, "home", ".claude", "projects", "-home-dev-shop", "0a0b.jsonl");
      await Deno.writeTextFile(other, lines(5, 300));
      const u: KeepUnit = {
        key: PRUNE_OTHER,
        source: "claude-code",
        sessionId: PRUNE_OTHER.split(":")[1]!,
        files: [{ path: other, role: "main" }],
      };
      await vault.keep([u]);
      await Deno.remove(other);
      await vault.keep([u]);
    },
    // Budget: the current copies only (the superseded version and the deleted file go).
    job: () => ({ op: "prune", maxBytes: 1 }),
  },
];

async function runChild(root: string, job: unknown, k: number) {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", CHILD, join(root, "vault"), JSON.stringify(job), String(k)],
    stdout: "piped",
    stderr: "piped",
  }).output();
  return {
    signal: out.signal,
    code: out.code,
    stdout: new TextDecoder().decode(out.stdout),
    stderr: new TextDecoder().decode(out.stderr),
  };
}

/** A catalog's shape for comparison: per file, its versions' sizes. */
function shape(cs: Catalog[]): string {
  return JSON.stringify(
    cs.map((c) => ({ key: c.key, files: c.files.map((f) => f.versions.map((v) => v.size)) }))
      .sort((a, b) => a.key.localeCompare(b.key)),
  );
}

function keysOf(sh: string): string[] {
  return (JSON.parse(sh) as { key: string }[]).map((c) => c.key);
}

/** One catalog's form in a shape ("absent" when it has none). */
function formOf(sh: string, key: string): string {
  const c = (JSON.parse(sh) as { key: string }[]).find((x) => x.key === key);
  return c ? JSON.stringify(c) : "absent";
}

interface Tally {
  kills: number;
  damaged: number;
  missingObjects: number;
  torn: number;
  notConverged: number;
  badRestores: number;
  tempsAfter: number;
  orphansCollected: number;
}

async function temps(dir: string): Promise<number> {
  let n = 0;
  const entries = await Array.fromAsync(Deno.readDir(dir)).catch((err) => {
    if (err instanceof Deno.errors.NotFound) return [];
    throw err;
  });
  for (const e of entries) {
    if (e.isDirectory) n += await temps(join(dir, e.name));
    else if (parseTempName(e.name)) n++;
  }
  return n;
}

async function objectsOk(vault: Vault, cs: Catalog[]): Promise<number> {
  let missing = 0;
  for (const c of cs) {
    for (const f of c.files) {
      for (const v of f.versions) {
        for (const k of v.chunks) {
          try {
            await vault.objects.get(k);
          } catch {
            missing++;
          }
        }
      }
    }
  }
  return missing;
}

async function phaseRun(base: string, phase: Phase, t: Tally): Promise<number> {
  // The vault names files by absolute path: every run happens at the same place (`w`),
  // from a saved copy of the state before the write.
  const root = join(base, "w");
  const saved = join(base, "saved");
  await Deno.mkdir(root);
  await phase.setup(root);
  const before = shape((await new Vault({ dir: join(root, "vault") }).list()).catalogs);
  await copyTree(root, saved);
  // The reference: the same write, uninterrupted (counting its operations).
  const counted = await runChild(root, phase.job(root), 0);
  assert.equal(counted.code, 0, counted.stderr);
  const ops = Number(/ops (\d+)/.exec(counted.stdout)![1]);
  assert.ok(ops > 5, `${phase.name}: ${ops} operations`);
  const after = shape((await new Vault({ dir: join(root, "vault") }).list()).catalogs);
  assert.notEqual(after, before, `${phase.name} changes the vault`);
  await Deno.remove(root, { recursive: true });

  for (let k = 1; k <= ops; k++) {
    await copyTree(saved, root);
    const r = await runChild(root, phase.job(root), k);
    assert.equal(r.signal, "SIGKILL", `${phase.name} k=${k}: ${r.code} ${r.stderr}`);
    t.kills++;
    const vault = new Vault({ dir: join(root, "vault") });
    const listed = await vault.list();
    t.damaged += listed.damaged.length;
    t.missingObjects += await objectsOk(vault, listed.catalogs);
    // Each catalog is whole: its form before the write or after it (a prune rewrites
    // several catalogs one by one, so the vault as a whole may sit between the two).
    for (
      const key of new Set([...keysOf(before), ...keysOf(after), ...keysOf(shape(listed.catalogs))])
    ) {
      const now = formOf(shape(listed.catalogs), key);
      if (now !== formOf(before, key) && now !== formOf(after, key)) t.torn++;
    }
    // The next process: recover once, then the same write.
    await vault.recover();
    t.tempsAfter += await temps(join(root, "vault"));
    const job = phase.job(root);
    if (job.op === "keep") await vault.keep([job.unit]);
    else await vault.prune(job.maxBytes);
    t.orphansCollected += (await vault.collect(0)).objects;
    const final = await vault.list();
    if (shape(final.catalogs) !== after) t.notConverged++;
    t.missingObjects += await objectsOk(vault, final.catalogs);
    // The session restores byte for byte to what the agent's files hold now.
    const c = final.catalogs.find((x) => x.key === `claude-code:${ID}`)!;
    const out = await restoreSession({ vault, catalog: c, to: join(root, "out"), homes: [] });
    for (const f of out) {
      const kept = c.files.find((x) => latest(x).size === f.bytes);
      const src = unitIn(root).files.find((x) => x.path === kept?.path)?.path;
      if (!src) {
        t.badRestores++;
        continue;
      }
      const [a, b] = [await Deno.readFile(f.path), await Deno.readFile(src)];
      if (a.length !== b.length || !a.every((x, i) => x === b[i])) t.badRestores++;
    }
    await Deno.remove(root, { recursive: true });
  }
  void vaultStatus;
  return ops;
}

Deno.test("A17: kill -9 at every operation of a vault write loses nothing and counts nothing twice", async () => {
  const t: Tally = {
    kills: 0,
    damaged: 0,
    missingObjects: 0,
    torn: 0,
    notConverged: 0,
    badRestores: 0,
    tempsAfter: 0,
    orphansCollected: 0,
  };
  const per: string[] = [];
  for (const phase of PHASES) {
    await withTempDir(async (base) => {
      const n = await phaseRun(base, phase, t);
      per.push(`${phase.name} ${n}`);
    });
  }
  figure(
    "A17",
    `kill points tried: ${t.kills} (${per.join(", ")}), damaged catalogs: ${t.damaged}, ` +
      `missing objects: ${t.missingObjects}, torn or double-counted versions: ${t.torn}, ` +
      `not converged after recovery: ${t.notConverged}, restores not byte-identical: ${t.badRestores}, ` +
      `temps after recovery: ${t.tempsAfter}, orphan objects collected: ${t.orphansCollected}`,
  );
  assert.deepEqual(
    [t.damaged, t.missingObjects, t.torn, t.notConverged, t.badRestores, t.tempsAfter],
    [0, 0, 0, 0, 0, 0],
  );
});
