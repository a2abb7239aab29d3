/**
 * The report zip masks secrets (issue 18): a native session's text files (session.jsonl,
 * turns/*, logs) are masked as they stream — including a key that straddles the 1 MiB
 * read boundary of a big log and a PEM block spread over many lines — while a binary file
 * is byte for byte as on disk, and README.txt says what was masked, where and how.
 * On the code before issue 18 the zip held every file as on disk: every key below was in
 * it in full, so the first assertion fails.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { buildCatalogWorld } from "./helpers/catalog_world.ts";
import { pythonZipTest, readZip } from "./helpers/catalog_zip.ts";
import { withTempDir } from "./helpers/temp.ts";
import { plantedKeys } from "./helpers/secret_keys.ts";
import { sessionReportZip } from "../lib/catalog/mod.ts";
import { ZIP_CHUNK_BYTES } from "../lib/catalog/zip_stream.ts";

const dec = new TextDecoder();

Deno.test("the report zip masks every secret in the session's text files, even across a 1 MiB read", () =>
  withTempDir(async (root) => {
    const w = await buildCatalogWorld(root, { runner: false, natives: 1 });
    const s = w.natives[0]!;
    const keys = plantedKeys();
    const pem = keys.find((k) => k.kind === "private key")!;
    const gh = keys.find((k) => k.kind === "github token")!;
    const aws = keys.find((k) => k.kind === "aws access key")!;
    // session.jsonl: one JSON line per key (escaped newlines, as the log writes them).
    for (const k of keys) {
      Deno.writeTextFileSync(
        join(s.dir, "session.jsonl"),
        JSON.stringify({ type: "note", text: `café ${k.line} 東京` }) + "\n",
        { append: true },
      );
    }
    // turns/: a raw multi-line PEM block, as a tool's stdout would hold it.
    Deno.writeTextFileSync(join(s.dir, "turns", "turn_050_stdout.txt"), `${pem.line}\n`);
    // A big log whose key straddles the first 1 MiB piece.
    const filler = "INFO request served in 3 ms\n";
    let log = filler.repeat(Math.floor((ZIP_CHUNK_BYTES - 20) / filler.length));
    log += "x".repeat(ZIP_CHUNK_BYTES - 20 - log.length);
    log += `token ${gh.secret} done\n` + filler.repeat(1000);
    const splitAt = log.indexOf(gh.secret);
    assert.ok(splitAt < ZIP_CHUNK_BYTES && splitAt + gh.secret.length > ZIP_CHUNK_BYTES);
    Deno.writeTextFileSync(join(s.dir, "runtime.log"), log);
    // A big log whose multi-line PEM block starts before the 1 MiB boundary and ends after
    // it: the open block is carried whole, so its base64 lines are masked with it.
    let daemonLog = filler.repeat(Math.floor((ZIP_CHUNK_BYTES - 200) / filler.length));
    daemonLog += `${pem.secret}\n` + filler.repeat(100);
    const pemAt = daemonLog.indexOf(pem.secret);
    assert.ok(pemAt < ZIP_CHUNK_BYTES && pemAt + pem.secret.length > ZIP_CHUNK_BYTES);
    Deno.writeTextFileSync(join(s.dir, "daemon.log"), daemonLog);
    // A binary file holding a key: left as it is.
    const bin = new Uint8Array([0, 1, 2, ...new TextEncoder().encode(aws.secret), 0, 255]);
    Deno.writeFileSync(join(s.dir, "frame.bin"), bin);

    const zip = await sessionReportZip(w.deps, s.id);
    const entries = readZip(zip);
    const text = (name: string) => dec.decode(entries.find((e) => e.name.endsWith(name))!.data);
    for (const e of entries) {
      if (e.name.endsWith("frame.bin")) continue;
      const body = dec.decode(e.data);
      for (const k of keys) assert.ok(!body.includes(k.secret), `${k.kind} in ${e.name}`);
    }
    for (const k of keys) {
      const masked = `${
        k.secret.slice(0, Math.min(4, Math.floor(k.secret.length / 3)))
      }…[${k.kind}]`;
      assert.ok(text("session.jsonl").includes(masked), `${masked} not in session.jsonl`);
    }
    // Masking keeps a JSONL file valid: every line still parses.
    for (const line of text("session.jsonl").split("\n").filter(Boolean)) JSON.parse(line);
    // Everything else is byte for byte: the masked log is the log with the key replaced.
    assert.equal(text("runtime.log"), log.replace(gh.secret, "ghp_…[github token]"));
    assert.equal(
      text("turn_050_stdout.txt"),
      `${pem.line.replace(pem.secret, "----…[private key]")}\n`,
    );
    assert.equal(text("daemon.log"), daemonLog.replace(pem.secret, "----…[private key]"));
    assert.deepEqual(entries.find((e) => e.name.endsWith("frame.bin"))!.data, bin);
    const readme = text("README.txt");
    assert.match(readme, /Secrets are masked in the text files/);
    assert.match(readme, /sk-p…\[openai key\]/);
    assert.match(readme, new RegExp(`Masked ${keys.length + 3} secrets in 4 file\\(s\\)`));
    assert.match(readme, /runtime\.log: github token ×1/);
    assert.match(readme, /turns\/turn_050_stdout\.txt: private key ×1/);
    const py = await pythonZipTest(zip);
    assert.equal(py.code, 0, py.out);
  }));
