/**
 * Hostile material for the jump-to-hit containment tests (reliability-plan D5): canary
 * files OUTSIDE a session directory, things planted INSIDE it that point out (symlinks,
 * symlink chains, a symlink to /dev/zero, to /proc/self/environ and to a FIFO, a FIFO,
 * a hardlink to the canary, a directory, a dangling link, a symlinked turns/ in a second
 * session), spine lines naming those plants (so the detail view itself tries to read
 * them), and ≥ 60 `locate=` values: malformed ones (must be 400) and well-formed ones
 * aimed at the plants (must degrade to stale/unavailable without serving a byte).
 */
import { join } from "node:path";
import { hash16Of, type Locator } from "../../lib/message_search/mod.ts";

/** Marker bytes in every canary: finding them in a response is an escape. */
export const CANARY = "CANARY-5e3f-OUTSIDE-SESSION-DIR";

/** What {@link plant} made. */
export interface Planted {
  canaryPath: string;
  canaryHash: string;
  /** File names (relative to the session dir) that lead outside or are not regular. */
  traps: string[];
}

const encoder = new TextEncoder();

/** Plants the traps in `dir` (a native session dir) and a canary next to `root`. */
export function plant(root: string, dir: string): Planted {
  const canaryPath = join(root, "canary.txt");
  const canary = `${CANARY}\n`.repeat(64);
  Deno.writeTextFileSync(canaryPath, canary);
  const outsideDir = join(root, "outside");
  Deno.mkdirSync(outsideDir, { recursive: true });
  Deno.writeTextFileSync(join(outsideDir, "turn_001_model.txt"), canary);
  Deno.mkdirSync(join(root, "fifos"), { recursive: true });
  const fifo = join(root, "fifos", "outside.fifo");
  new Deno.Command("mkfifo", { args: [fifo, join(dir, "turns", "turn_904_model.txt")] })
    .outputSync();
  const t = (n: number) => join(dir, "turns", `turn_${n}_model.txt`);
  Deno.symlinkSync(canaryPath, t(900));
  Deno.symlinkSync(t(900), join(dir, "turns", "turn_902_chain.txt"));
  Deno.symlinkSync(join(dir, "turns", "turn_902_chain.txt"), t(901));
  Deno.symlinkSync("/dev/zero", t(903));
  Deno.symlinkSync("/proc/self/environ", t(905));
  Deno.linkSync(canaryPath, t(906));
  Deno.mkdirSync(t(907));
  Deno.symlinkSync(fifo, t(908));
  Deno.symlinkSync(join(root, "does-not-exist"), t(909));
  Deno.symlinkSync(outsideDir, t(910));
  Deno.symlinkSync("../../../canary.txt", t(911));
  Deno.symlinkSync(canaryPath, join(dir, `n9_${"a".repeat(32)}_stdout.log`));
  Deno.linkSync(canaryPath, join(dir, `n9_${"b".repeat(32)}_stderr.log`));
  const traps = [900, 901, 903, 904, 905, 906, 907, 908, 909, 910, 911].map((n) =>
    `turns/turn_${n}_model.txt`
  );
  traps.push("turns/turn_902_chain.txt");
  return { canaryPath, canaryHash: hash16Of(encoder.encode(canary)), traps };
}

/** Spine lines that make the detail view itself try to read every trap. */
export function trapEvents(traps: string[], startMs: number): string {
  const lines = traps.map((file, i) =>
    JSON.stringify({
      ts: "12:00:00.000",
      ts_ms: startMs + i,
      turn: 900 + i,
      event: "model_response",
      data: { model_offset: 0, model_bytes: 4096, has_tool_calls: false },
      file,
    })
  );
  lines.push(JSON.stringify({
    ts: "12:00:01.000",
    ts_ms: startMs + 100,
    turn: 950,
    event: "command_finished",
    data: {
      nonce: "n9",
      exit_code: 0,
      stdout_log: `n9_${"a".repeat(32)}_stdout.log`,
      stderr_log: `n9_${"b".repeat(32)}_stderr.log`,
      pty_log: "../../canary.txt",
      stdout_bytes: 10,
      stderr_bytes: 10,
      duration_ms: 1,
    },
  }));
  lines.push(JSON.stringify({
    ts: "12:00:02.000",
    ts_ms: startMs + 200,
    turn: 951,
    event: "agent_output",
    data: { stdout_bytes: 1, stderr_bytes: 1, exit_codes: [0] },
    file: "../../canary.txt",
    file2: "/etc/passwd",
  }));
  return lines.join("\n") + "\n";
}

function b64url(s: string): string {
  const bytes = encoder.encode(s);
  let bin = "";
  for (const b of bytes) bin += String.fromCharCode(b);
  return btoa(bin).replaceAll("+", "-").replaceAll("/", "_").replace(/=+$/, "");
}

/** `locate=` values that are not locators at all. */
export function malformedVectors(): string[] {
  const j = (o: unknown) => JSON.stringify(o);
  const h = "0123456789abcdef";
  return [
    "../",
    "../../etc/passwd",
    "%2e%2e%2f",
    "..%2F..%2Fetc%2Fpasswd",
    "%252e%252e%252f",
    "..\\..\\windows\\win.ini",
    "/etc/passwd",
    "file:///etc/passwd",
    "\0",
    "turns/turn_001_model.txt\0",
    "%c0%ae%c0%ae%c0%af",
    "．．／．．／etc",
    "..∕..∕etc∕passwd",
    "x".repeat(1_000_000),
    "{" + " ".repeat(1_000_000),
    "!!!not-base64!!!",
    "eyJ2IjoxfQ==",
    b64url("not json at all"),
    (() => {
      const bin = String.fromCharCode(0xff, 0xfe, 0x7b);
      return btoa(bin).replaceAll("+", "-").replaceAll("/", "_").replace(/=+$/, "");
    })(),
    j({ v: 1, kind: "native_file", file: "../../etc/passwd", hash: h }),
    j({ v: 2, kind: "native_event", line: 1, hash: h }),
    j({ v: 1, kind: "native_event", line: 1, hash: h, path: "/etc/passwd" }),
    j({ v: 1, kind: "native_event", line: 0, hash: h }),
    j({ v: 1, kind: "native_event", line: -1, hash: h }),
    j({ v: 1, kind: "native_event", line: 1.5, hash: h }),
    j({ v: 1, kind: "native_event", line: 1, hash: "0123456789ABCDEF" }),
    j({ v: 1, kind: "native_event", line: 1, hash: "../../etc/passwd" }),
    j({ v: 1, kind: "native_sidecar_span", file: "", offset: 0, len: 1, line: 1, hash: h }),
    j({
      v: 1,
      kind: "native_sidecar_span",
      file: "a".repeat(513),
      offset: 0,
      len: 1,
      line: 1,
      hash: h,
    }),
    j({
      v: 1,
      kind: "native_sidecar_span",
      file: "turns/turn_001_model.txt",
      offset: -1,
      len: 1,
      line: 1,
      hash: h,
    }),
    j({ v: 1, kind: "external_record_id", record_id: "", file: "x", hash: h }),
    b64url(j({ v: 1, kind: "external_line", file: "x", generation: -1, line: 1, hash: h })),
    "[]",
    "null",
    "{}",
    "",
    '{"__proto__":{"kind":"native_event"},"v":1}',
    "e30",
  ];
}

/** Well-formed locators aimed outside the session directory or at non-regular files. */
export function wellFormedVectors(p: Planted): Locator[] {
  const hashes = [p.canaryHash, hash16Of("root:x:0:0:root:/root:/bin/bash\n")];
  const files = [
    ...p.traps,
    "../../canary.txt",
    "turns/../../canary.txt",
    "/etc/passwd",
    "file:///etc/passwd",
    "turns\\..\\..\\canary.txt",
    "turns/turn_900_model.txt\0",
    "turns/．．/canary.txt",
    "turns∕turn_001_model.txt",
    "session_meta.json",
    "turns//turn_001_model.txt",
    "./turns/turn_001_model.txt",
    "turns/turn_001_model.txt/..",
    "/proc/self/environ",
    "%2e%2e/canary.txt",
  ];
  const out: Locator[] = [];
  for (const file of files) {
    for (const hash of hashes) {
      out.push({ v: 1, kind: "native_sidecar_span", file, offset: 0, len: 4096, line: 1, hash });
    }
    out.push({ v: 1, kind: "external_record_id", record_id: "../x", file, hash: hashes[0]! });
    out.push({ v: 1, kind: "external_line", file, generation: 0, line: 1, hash: hashes[0]! });
  }
  out.push({
    v: 1,
    kind: "native_sidecar_span",
    file: "turns/turn_001_model.txt",
    offset: Number.MAX_SAFE_INTEGER,
    len: 10,
    line: 1,
    hash: hashes[0]!,
  });
  out.push({
    v: 1,
    kind: "native_sidecar_span",
    file: "turns/turn_001_model.txt",
    offset: 0,
    len: Number.MAX_SAFE_INTEGER,
    line: 1,
    hash: hashes[0]!,
  });
  out.push({
    v: 1,
    kind: "native_message_id",
    message_seq: 9_999_999,
    line: 1_000_000_000,
    hash: hashes[0]!,
  });
  out.push({ v: 1, kind: "native_event", line: 99_999, hash: hashes[0]! });
  return out;
}
