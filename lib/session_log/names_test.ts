import assert from "node:assert/strict";
import { join } from "node:path";
import {
  applyNameOverlays,
  NAME_MAX_CHARS,
  normalizeName,
  normalizeSource,
  OVERLAY_MAX_BYTES,
  readNameOverlays,
  setOverlayName,
} from "./names.ts";
import { renameNativeSession } from "./rename.ts";
import { SessionLog } from "./session_log.ts";
import { readMeta } from "./meta.ts";
import { readSessionEvents } from "./read_events.ts";
import { withTempDir } from "../../tests/helpers/temp.ts";

Deno.test("free-form sources collapse to the canonical five", () => {
  const cases: [string, string | null][] = [
    ["claude code", "claude-code"],
    ["CC", "claude-code"],
    ["claude_code", "claude-code"],
    ["kimi code", "kimi"],
    ["kimi-code", "kimi"],
    ["Pi Coding Agent", "pi"],
    ["codex", "codex"],
    ["intendant", "intendant"],
    ["Gemini CLI", "gemini"],
    ["qwen-code", "qwen"],
    ["GitHub Copilot", "copilot"],
    ["cursor-agent", "cursor"],
    ["Factory Droid", "droid"],
    ["OpenCode", "opencode"],
    ["goose", "goose"],
    // An agent no extractor reads stays unknown ("gemini" was this example before issue 17).
    ["aider", null],
  ];
  for (const [raw, want] of cases) assert.equal(normalizeSource(raw), want, raw);
});

Deno.test("names are whitespace-collapsed and cut at 180 characters without splitting a character", () => {
  assert.equal(normalizeName("  Fix \n\t auth   bug "), "Fix auth bug");
  assert.equal(normalizeName("   "), null);
  const emoji = "😀".repeat(200);
  const cut = normalizeName(emoji)!;
  assert.equal(Array.from(cut).length, NAME_MAX_CHARS);
  assert.equal(cut, "😀".repeat(180));
  const mixed = "é".repeat(179) + "漢字";
  assert.equal(normalizeName(mixed), "é".repeat(179) + "漢");
});

Deno.test("overlays are written atomically, normalized on read, applied by session_id or resume_id", () =>
  withTempDir(async (root) => {
    const path = join(root, "session_names.json");
    assert.deepEqual(await readNameOverlays(path), {});
    await setOverlayName(path, { source: "claude code", sessionId: "abc", name: "  Auth\n work " });
    await setOverlayName(path, { source: "codex", sessionId: "t1", name: "Codex thread" });
    // A hand-edited file with an overlong name is cut on read.
    const raw = JSON.parse(Deno.readTextFileSync(path));
    raw.pi = { p1: "x".repeat(500) };
    Deno.writeTextFileSync(path, JSON.stringify(raw));
    const o = await readNameOverlays(path);
    assert.equal(o["claude-code"]?.abc, "Auth work");
    assert.equal(o.pi?.p1?.length, 180);
    const listed = applyNameOverlays([
      { source: "claude-code", session_id: "abc", name: null },
      { source: "codex", session_id: "other", resume_id: "t1" },
      { source: "kimi", session_id: "k", name: "  keep  me " },
    ], o);
    assert.deepEqual(listed.map((l) => l.name), ["Auth work", "Codex thread", "keep me"]);
    await setOverlayName(path, { source: "codex", sessionId: "t1", name: null });
    assert.equal((await readNameOverlays(path)).codex?.t1, undefined);
    await assert.rejects(
      setOverlayName(path, { source: "aider", sessionId: "x", name: "n" }),
      /Unknown session source "aider"/,
    );
  }));

Deno.test("a symlink, a FIFO or an oversized file at the overlay's name is ignored, never read through", () =>
  withTempDir(async (root) => {
    const canary = join(root, "elsewhere.json");
    Deno.writeTextFileSync(canary, JSON.stringify({ codex: { t1: "CANARY name" } }));
    const path = join(root, "session_names.json");
    Deno.symlinkSync(canary, path);
    assert.deepEqual(await readNameOverlays(path), {}, "no read through a planted symlink");
    // Writing replaces the link itself (atomic rename), never the canary.
    await setOverlayName(path, { source: "codex", sessionId: "t2", name: "mine" });
    assert.equal(Deno.lstatSync(path).isSymlink, false);
    assert.match(Deno.readTextFileSync(canary), /CANARY/);
    Deno.removeSync(path);
    const mkfifo = await new Deno.Command("mkfifo", { args: [path] }).output();
    assert.ok(mkfifo.success);
    assert.deepEqual(await readNameOverlays(path), {}, "a FIFO is neither read nor waited on");
    Deno.removeSync(path);
    Deno.writeTextFileSync(path, " ".repeat(OVERLAY_MAX_BYTES) + "{}");
    assert.deepEqual(await readNameOverlays(path), {});
  }));

Deno.test("a native rename by unique prefix rewrites meta and appends session_renamed", () =>
  withTempDir(async (root) => {
    const logsDir = join(root, "logs");
    const log = await SessionLog.create({
      logsDir,
      tmpDir: root,
      meta: { projectRoot: "/p", task: "t" },
    });
    await log.close();
    const r = await renameNativeSession(logsDir, log.sessionId.slice(0, 6), "  New\tname ");
    assert.deepEqual(r, { sessionId: log.sessionId, name: "New name" });
    const meta = await readMeta(log.dir);
    assert.ok(meta.ok && meta.meta.name === "New name");
    const { events } = await readSessionEvents(log.dir);
    assert.deepEqual(events.at(-1)?.event.data, { name: "New name", previous: null });
  }));

Deno.test("names are stored clean: escape sequences, controls and bidi overrides never reach meta or the overlay", () =>
  withTempDir(async (root) => {
    const hostile = "\x1b]0;pwned\x07Fix \x1b[2J\x1b[31mthe\x1b[0m \u202Ebug\x00\x07\b \x9b2J";
    assert.equal(normalizeName(hostile), "Fix the bug");
    assert.equal(normalizeName("\x1b[2J\u2066\u2069"), null, "nothing but controls is no name");
    const logsDir = join(root, "logs");
    const log = await SessionLog.create({
      logsDir,
      tmpDir: root,
      meta: { projectRoot: "/p", task: "t" },
    });
    await log.close();
    const r = await renameNativeSession(logsDir, log.sessionId, hostile);
    assert.equal(r.name, "Fix the bug");
    const meta = await readMeta(log.dir);
    assert.ok(meta.ok && meta.meta.name === "Fix the bug");
    const path = join(root, "session_names.json");
    await setOverlayName(path, { source: "codex", sessionId: "t1", name: hostile });
    assert.doesNotMatch(Deno.readTextFileSync(path), /\\u001b|\\u0000|\u202E|\x9b/);
    assert.equal((await readNameOverlays(path)).codex?.t1, "Fix the bug");
  }));
