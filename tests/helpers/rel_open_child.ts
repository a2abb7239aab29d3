/**
 * Child for the store-open permission test: opens (creating) the store at <root> and
 * prints "opened <revision>". The parent runs it with --allow-read/--allow-write limited
 * to the state root, as the locked `serve` profile does.
 * Usage: rel_open_child.ts <root>
 */
import { openStore } from "../../lib/message_search/store/mod.ts";

const [root] = Deno.args;
if (!root) throw new Error("usage: rel_open_child.ts <root>");
const store = await openStore({ root, parserVersion: 1, windowDays: null });
console.log(`opened ${(await store.readManifest()).revision}`);
