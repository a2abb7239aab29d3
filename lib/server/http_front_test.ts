import assert from "node:assert/strict";
import { join } from "node:path";
import { RawClient } from "../../tests/helpers/raw_http.ts";
import { withTempDir } from "../../tests/helpers/temp.ts";
import { type FrontLimits, startHttpFront } from "./http_front.ts";

/** A front on a free port before a real Deno.serve on a unix socket; `fn` gets the port. */
function withFront(
  limits: Partial<FrontLimits>,
  fn: (port: number, front: ReturnType<typeof startHttpFront>) => Promise<void>,
): Promise<void> {
  return withTempDir(async (dir) => {
    const path = join(dir, "s.sock");
    const ac = new AbortController();
    // A body cut by the body deadline fails its read: answered quietly instead of logged.
    const onError = () => new Response("aborted", { status: 500 });
    const server = Deno.serve(
      { path, signal: ac.signal, onListen: () => {}, onError },
      async (req) => {
        const url = new URL(req.url);
        if (url.pathname === "/echo") {
          const body = await req.text();
          return new Response(`${req.method} ${req.headers.get("host")} ${body}`);
        }
        if (url.pathname === "/slow-stream") {
          // A response that stays silent longer than the idle timeout between its writes.
          let n = 0;
          let t: ReturnType<typeof setInterval>;
          return new Response(
            new ReadableStream({
              start(c) {
                t = setInterval(() => {
                  c.enqueue(new TextEncoder().encode(`tick ${++n}\n`));
                  if (n === 4) {
                    clearInterval(t);
                    c.enqueue(new TextEncoder().encode("end\n"));
                    c.close();
                  }
                }, Number(url.searchParams.get("every") ?? "100"));
              },
              cancel() {
                clearInterval(t);
              },
            }),
          );
        }
        return new Response("ok");
      },
    );
    const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
    const front = startHttpFront({
      listener,
      connectUpstream: () => Deno.connect({ transport: "unix", path }),
      limits,
    });
    try {
      await fn((listener.addr as Deno.NetAddr).port, front);
    } finally {
      await front.close();
      ac.abort();
      await server.finished;
    }
  });
}

const req = (target: string, extra = "") =>
  `GET ${target} HTTP/1.1\r\nHost: 127.0.0.1\r\n${extra}\r\n`;

Deno.test("front: keep-alive, pipelining, HEAD, bodies by length and chunked, 100-continue", () =>
  withFront({}, async (port) => {
    const c = await RawClient.open(port);
    try {
      for (let i = 0; i < 3; i++) {
        await c.send(req("/echo"));
        assert.equal((await c.response())?.body, "GET 127.0.0.1 ");
      }
      // Two requests in one write, then a HEAD (Content-Length but no body) and a GET.
      await c.send(req("/echo") + req("/x") + "HEAD /x HTTP/1.1\r\nHost: h\r\n\r\n" + req("/echo"));
      assert.equal((await c.response())?.body, "GET 127.0.0.1 ");
      assert.equal((await c.response())?.body, "ok");
      const head = await c.response({ head: true });
      assert.equal(head?.status, 200);
      assert.equal((await c.response())?.body, "GET 127.0.0.1 ");
      await c.send('POST /echo HTTP/1.1\r\nHost: h\r\nContent-Length: 9\r\n\r\n{"a":"b"}');
      assert.equal((await c.response())?.body, 'POST h {"a":"b"}');
      // Chunked, with an extension and a trailer (dropped), split across writes.
      await c.send(
        "POST /echo HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n4;x=1\r\nab",
      );
      await c.send("cd\r\n3\r\nefg\r\n0\r\nX-Trailer: t\r\n\r\n");
      assert.equal((await c.response())?.body, "POST h abcdefg");
      await c.send(
        "POST /echo HTTP/1.1\r\nHost: h\r\nExpect: 100-continue\r\nContent-Length: 3\r\n\r\n",
      );
      assert.equal((await c.response())?.status, 100);
      await c.send("xyz");
      assert.equal((await c.response())?.body, "POST h xyz");
    } finally {
      c.close();
    }
  }));

Deno.test("front: malformed heads are refused with their status and the connection closed", () =>
  withFront({ headMaxBytes: 1024, bodyMaxBytes: 100 }, async (port) => {
    const cases: [string, number][] = [
      [req("/x", `X-Big: ${"a".repeat(2000)}\r\n`), 431],
      [`GET /x HTTP/1.1\r\nHost: h\r\nX-Slow: ${"a".repeat(2000)}`, 431],
      ["POST /x HTTP/1.1\r\nHost: h\r\nContent-Length: 101\r\n\r\n", 413],
      [
        "POST /x HTTP/1.1\r\nHost: h\r\nContent-Length: 1\r\nTransfer-Encoding: chunked\r\n\r\n",
        400,
      ],
      ["POST /x HTTP/1.1\r\nHost: h\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n", 400],
      ["POST /x HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: gzip, chunked\r\n\r\n", 501],
      ["PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n", 505],
      ["GET /x HTTP/1.1\r\n\r\n", 400],
      ["GET /x HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n", 400],
      [req("/x", "X-A: 1\r\n folded\r\n"), 400],
      [req("/x", "X-A : 1\r\n"), 400],
      [req("/x", "X-A: a\rb\r\n"), 400],
      [req("/x", "X-A: a\x00b\r\n"), 400],
      ["GET /x  HTTP/1.1\r\nHost: h\r\n\r\n", 400],
      ["GET /a#b HTTP/1.1\r\nHost: h\r\n\r\n", 400],
      ["GET /\x7fx HTTP/1.1\r\nHost: h\r\n\r\n", 400],
    ];
    for (const [text, status] of cases) {
      const c = await RawClient.open(port);
      try {
        await c.send(text);
        const r = await c.response();
        assert.equal(r?.status, status, JSON.stringify(text.slice(0, 60)));
        assert.equal(r?.headers["connection"], "close");
        assert.equal(await c.closedByPeer(), true);
      } finally {
        c.close();
      }
    }
    // A bare-LF request is read as the same request.
    const c = await RawClient.open(port);
    await c.send("GET /echo HTTP/1.1\nHost: lf\n\n");
    assert.equal((await c.response())?.body, "GET lf ");
    c.close();
  }));

Deno.test("front: header deadline (408), idle timeout, body deadline; a slow response is never cut", () =>
  withFront({ headerTimeoutMs: 400, idleTimeoutMs: 700, bodyTimeoutMs: 600 }, async (port) => {
    const t0 = Date.now();
    const slow = await RawClient.open(port);
    const silent = await RawClient.open(port);
    const kept = await RawClient.open(port);
    const body = await RawClient.open(port);
    const stream = await RawClient.open(port);
    try {
      await slow.send("GET /x HTTP/1.1\r\n");
      const trickle = setInterval(() => slow.send("X").catch(() => {}), 100);
      await kept.send(req("/x"));
      assert.equal((await kept.response())?.body, "ok");
      await body.send("POST /echo HTTP/1.1\r\nHost: h\r\nContent-Length: 10\r\n\r\nabc");
      // Silent 250 ms between writes, 1 s in all: longer than the idle timeout.
      await stream.send(req("/slow-stream?every=250"));
      const streamed = await stream.until("end\n");
      const r = await slow.response();
      clearInterval(trickle);
      assert.equal(r?.status, 408);
      const closedAt = async (c: RawClient) => (await c.closedByPeer(), Date.now() - t0);
      const [s, i, k, b] = await Promise.all([slow, silent, kept, body].map(closedAt));
      assert.ok(streamed, "the slow response arrived whole");
      assert.ok(s! >= 350 && s! < 1500, `slow head closed at ${s}`);
      assert.ok(i! >= 350 && i! < 1500, `silent connection closed at ${i}`);
      assert.ok(k! >= 650 && k! < 2000, `kept-alive closed at ${k}`);
      assert.ok(b! >= 550 && b! < 2000, `slow body closed at ${b}`);
    } finally {
      for (const c of [slow, silent, kept, body, stream]) c.close();
    }
  }));

Deno.test("front: at the connection cap the idlest connection makes room; all busy gets 503", () =>
  withFront({ maxConnections: 3 }, async (port, front) => {
    const idle = [await RawClient.open(port), await RawClient.open(port)];
    const busy = await RawClient.open(port);
    await busy.send(req("/slow-stream?every=300"));
    await busy.until("tick 1");
    assert.equal(front.open, 3);
    const fresh = await RawClient.open(port);
    await fresh.send(req("/x"));
    assert.equal((await fresh.response())?.body, "ok");
    assert.equal(await idle[0]!.closedByPeer(), true, "the oldest idle connection was closed");
    // Now two busy ones and a third busy: a fourth finds no idle connection.
    const busy2 = fresh;
    await busy2.send(req("/slow-stream?every=300"));
    await idle[1]!.send(req("/slow-stream?every=300"));
    await busy2.until("tick 1");
    await idle[1]!.until("tick 1");
    const refused = await RawClient.open(port);
    assert.equal((await refused.response())?.status, 503);
    for (const c of [...idle, busy, busy2, refused]) c.close();
  }));
