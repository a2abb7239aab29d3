import assert from "node:assert/strict";
import { connectionLostReason, isClientFault } from "./connection_faults.ts";

/** An error shaped as the client raises it (porsager src/errors.js). */
function clientError(code: string, stack?: string): Error {
  const e = Object.assign(new Error(`write ${code} 127.0.0.1:5432`), { code });
  if (stack) e.stack = stack;
  return e;
}

Deno.test("connectionLostReason names the client's, the server's and the socket's lost connections", () => {
  assert.match(
    connectionLostReason(clientError("CONNECTION_CLOSED"))!,
    /closed the connection \(CONNECTION_CLOSED\)/,
  );
  assert.match(connectionLostReason(clientError("CONNECT_TIMEOUT"))!, /CONNECT_TIMEOUT/);
  const pg = Object.assign(new Error("the database system is starting up"), {
    name: "PostgresError",
    code: "57P03",
  });
  assert.match(connectionLostReason(pg)!, /starting up or shutting down.*SQLSTATE 57P03/);
  const shutdown = Object.assign(new Error("terminating connection due to administrator command"), {
    name: "PostgresError",
    code: "57P01",
  });
  assert.match(connectionLostReason(shutdown)!, /ended the session/);
  // Another SQLSTATE (a unique violation) is no lost connection; neither is a non-postgres 08xxx.
  assert.equal(
    connectionLostReason(Object.assign(new Error("dup"), { name: "PostgresError", code: "23505" })),
    null,
  );
  assert.equal(connectionLostReason(Object.assign(new Error("x"), { code: "08006" })), null);
  // A bare socket error counts in a team command, or when its stack names the client.
  const reset = Object.assign(new Error("read ECONNRESET"), { code: "ECONNRESET" });
  reset.stack =
    "Error: read ECONNRESET\n    at TCP.onStreamRead (ext:deno_node/internal/stream_base_commons.ts:1:1)";
  assert.equal(connectionLostReason(reset), null);
  assert.match(connectionLostReason(reset, { team: true })!, /ECONNRESET/);
  reset.stack +=
    "\n    at Socket.error (file:///x/node_modules/.deno/postgres@3.4.9/node_modules/postgres/src/connection.js:1:1)";
  assert.match(connectionLostReason(reset)!, /ECONNRESET/);
  assert.equal(connectionLostReason("CONNECTION_CLOSED"), null);
});

Deno.test("isClientFault knows a throw inside the client, in a checkout and in the single file", () => {
  const inside = new TypeError("Cannot read properties of null (reading 'write')");
  inside.stack = `TypeError: Cannot read properties of null (reading 'write')
    at Immediate.nextWrite (file:///w/node_modules/.deno/postgres@3.4.9/node_modules/postgres/src/connection.js:255:22)
    at Immediate.callback (ext:deno_node/timers.ts:1:1)`;
  assert.ok(isClientFault(inside));
  const bundled = new TypeError("Cannot read properties of null (reading 'write')");
  bundled.stack = `TypeError: Cannot read properties of null (reading 'write')
    at Immediate.nextWrite (file:///home/u/intendant.js:90211:22)`;
  assert.ok(isClientFault(bundled));
  // Our own TypeError (the top frame is ours) stays a bug with its stack.
  const ours = new TypeError("x is undefined");
  ours.stack = `TypeError: x is undefined
    at search (file:///w/lib/catalog/search.ts:1:1)
    at file:///w/node_modules/.deno/postgres@3.4.9/node_modules/postgres/src/query.js:1:1`;
  assert.equal(isClientFault(ours), false);
  const refused = Object.assign(new Error("connect ECONNREFUSED 127.0.0.1:5432"), {
    code: "ECONNREFUSED",
  });
  refused.stack =
    "Error: connect ECONNREFUSED\n    at _afterConnectImpl (ext:deno_node/net.ts:1:6347)";
  assert.equal(isClientFault(refused), false);
  assert.ok(isClientFault(refused, { team: true }));
});
