import assert from "node:assert/strict";
import { formatBytes, formatDuration } from "./format.ts";

Deno.test("formatBytes names the entry and excerpt caps the way the badges say them", () => {
  assert.equal(formatBytes(0), "0 B");
  assert.equal(formatBytes(1023), "1023 B");
  assert.equal(formatBytes(8 * 1024), "8 KiB");
  assert.equal(formatBytes(64 * 1024), "64 KiB");
  assert.equal(formatBytes(256 * 1024), "256 KiB");
  assert.equal(formatBytes(1536), "1.5 KiB");
  assert.equal(formatBytes(3 * 1024 * 1024 + 512 * 1024), "3.5 MiB");
});

Deno.test("formatDuration is compact at every scale", () => {
  assert.equal(formatDuration(12), "12 ms");
  assert.equal(formatDuration(3210), "3.2 s");
  assert.equal(formatDuration(245_000), "4 min 5 s");
});
