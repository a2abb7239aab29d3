/**
 * machineRoleName: every valid machine name maps to its own role name within PostgreSQL's
 * 63-byte identifier limit (the server would silently truncate a longer one), case kept
 * apart ("Box" and "box" are two machines and must be two roles).
 */
import assert from "node:assert/strict";
import { MACHINE_NAME_MAX } from "./machine_name.ts";
import { machineRoleName } from "./machine_role.ts";

Deno.test("machineRoleName: readable, injective, within 63 bytes", () => {
  assert.equal(machineRoleName("laptop-a"), "intendant_m_laptop-a");
  assert.notEqual(machineRoleName("Box"), machineRoleName("box"));
  const long = "a".repeat(MACHINE_NAME_MAX);
  const longer = "a".repeat(MACHINE_NAME_MAX - 1) + "b";
  assert.notEqual(machineRoleName(long), machineRoleName(longer));
  const seen = new Map<string, string>();
  const alphabet = "aAbB0._-";
  for (let i = 0; i < 5000; i++) {
    let n = "";
    const len = 1 + (i % MACHINE_NAME_MAX);
    for (let j = 0; j < len; j++) n += alphabet[(i * 7 + j * 13 + (i >> 3) * j) % alphabet.length];
    const r = machineRoleName(n);
    assert.ok(new TextEncoder().encode(r).length <= 63, r);
    assert.match(r, /^intendant_m_[a-z0-9._-]+$/);
    const prev = seen.get(r);
    assert.ok(prev === undefined || prev === n, `${prev} and ${n} share ${r}`);
    seen.set(r, n);
  }
});
