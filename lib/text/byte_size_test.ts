import assert from "node:assert/strict";
import { formatBytes, parseByteSize } from "./mod.ts";
import { DEFAULT_VAULT_MAX_BYTES, parseVaultMaxBytes } from "../config.ts";

Deno.test("parseByteSize: bytes and binary units in any case; anything else is refused", () => {
  assert.equal(parseByteSize("4096"), 4096);
  assert.equal(parseByteSize("20G"), 20 * 1024 ** 3);
  assert.equal(parseByteSize("512MiB"), 512 * 1024 ** 2);
  assert.equal(parseByteSize("1.5t"), 1.5 * 1024 ** 4);
  assert.equal(parseByteSize(" 64 kb "), 64 * 1024);
  for (const bad of ["", "G", "-1G", "0", "20 GB of it", "1e9", "20X"]) {
    assert.throws(() => parseByteSize(bad), RangeError, bad);
  }
  assert.equal(formatBytes(1536), "1.5 KiB");
  assert.equal(formatBytes(20 * 1024 ** 3), "20.0 GiB");
});

Deno.test("INTENDANT_VAULT_MAX_BYTES: unset is the documented default; a typo names the variable", () => {
  assert.equal(parseVaultMaxBytes(undefined), DEFAULT_VAULT_MAX_BYTES);
  assert.equal(parseVaultMaxBytes(""), DEFAULT_VAULT_MAX_BYTES);
  assert.equal(parseVaultMaxBytes("2G"), 2 * 1024 ** 3);
  assert.throws(() => parseVaultMaxBytes("lots"), /INTENDANT_VAULT_MAX_BYTES/);
});
