/**
 * Reliability-plan F2: the live stream cannot be forged. Hostile lines (bare CR, CRLF,
 * `id:`/`event:`/`retry:`/`data:` text, NUL, a BOM, a lone CR, 1 MB lines, valid JSON
 * with raw CR whitespace), each followed by a benign line, are appended to a native
 * session.jsonl while two clients follow its live stream through the real daemon (its
 * TCP front, real port): a spec-conformant event-stream parser (tests/helpers/
 * event_stream.ts) fed the raw bytes, and Chromium's own EventSource in the dashboard's
 * origin. Every line must arrive as exactly one event of the server's (a message with the
 * line's JSON, or `skipped` with server-made data) whose id is the line number; nothing
 * else, no `retry:`; and every benign line must arrive (the live view is not silenced:
 * the id a reconnect would resume from never passes the last real line). Negative
 * control: the old serializer (`id: N\ndata: <line>`) fed the same lines to the same
 * parser forges events and silences the view.
 */
import assert from "node:assert/strict";
import { lineText, splitCompleteLines } from "../lib/durable/mod.ts";
import { BROWSER_AVAILABLE, startRig } from "./helpers/browser.ts";
import { eventStreamParser, type ParsedEvent } from "./helpers/event_stream.ts";
import { figure } from "./helpers/figures.ts";
import { withTempDir } from "./helpers/temp.ts";
import { buildWorld } from "./helpers/world.ts";

const enc = new TextEncoder();
const MB = 1024 * 1024;

/** The hostile lines, as bytes (no LF inside: each is one line of the file). */
function hostileLines(): Uint8Array[] {
  const s = (t: string) => enc.encode(t);
  return [
    s(`{"event":"info"}\rid: 999999999\revent: status\rdata: {"status":"pwned"}\r\r`),
    s(`\r\revent: pwned\rdata: {"forged":true}\r\r`),
    s(`{"event":"info"}\rid: 999999999`),
    s(`id: 999999999`),
    s(`event: pwned`),
    s(`retry: 1`),
    s(`data: {"forged":true}`),
    s(`:comment\r\rdata: forged\r\r`),
    s(`{"event":"info","message":"raw CR whitespace"\r,\r"id":999999999}`),
    s(`{"event":"info","message":"id: 999999999\\nevent: pwned\\rretry: 1\\r\\n"}`),
    s(`{"event":"info","message":"crlf terminated"}\r`),
    s(`{"event":"info","message":"a\u0000b"}`),
    s(`{"event":"info","message":"\\u0000id: 7\\u0000"}`),
    s(`\uFEFF{"event":"info","message":"bom"}`),
    s(`\r`),
    s(``),
    new Uint8Array([0x7b, 0x22, 0x6d, 0x22, 0x3a, 0x22, 0xff, 0xfe, 0x0d, 0x22, 0x7d]),
    s(`{"event":"info","message":"\u2028\u2029 separators"}`),
    s(`{"event":"info","message":"${"A".repeat(MB)}"}`),
    s(`${"\rid: 999999999\revent: pwned\rdata: x\r".repeat(MB / 40)}`),
    s(`{"event":"info","message":"${"\\r".repeat(MB / 2)}"}`),
  ];
}

const benign = (i: number) => enc.encode(`{"event":"info","message":"benign ${i}"}`);

/** Expected: one event per appended line, typed by whether its text is JSON. */
interface Expected {
  id: number;
  type: "message" | "skipped";
  text: string;
  benign: boolean;
}

interface Score {
  forged: number;
  silenced: number;
}

/** Scores a stream's events against the lines; status events must be the real status. */
function score(o: {
  events: ParsedEvent[];
  retries: number;
  expected: Expected[];
  realStatus: string | null;
}): Score {
  const want = new Map(o.expected.map((e) => [e.id, e]));
  const seen = new Set<number>();
  let forged = o.retries;
  let last = 0;
  for (const ev of o.events) {
    if (ev.type === "status" && ev.data === JSON.stringify({ status: o.realStatus })) continue;
    const id = Number(ev.lastEventId);
    const w = want.get(id);
    if (ev.type === "message" && Number.isInteger(id) && id > last) last = id;
    if (!w || w.type !== ev.type || seen.has(id) || !dataMatches(w, ev.data)) {
      forged++;
      continue;
    }
    seen.add(id);
  }
  const lastLine = Math.max(...o.expected.map((e) => e.id));
  const missed = o.expected.filter((e) => e.benign && !seen.has(e.id)).length;
  return { forged, silenced: missed > 0 || last > lastLine ? 1 : 0 };
}

function dataMatches(w: Expected, data: string): boolean {
  try {
    if (w.type === "message") {
      return JSON.stringify(JSON.parse(data)) === JSON.stringify(JSON.parse(w.text));
    }
    const d = JSON.parse(data);
    return d.line === w.id && typeof d.reason === "string" && Object.keys(d).length === 3;
  } catch {
    return false;
  }
}

function isJson(t: string): boolean {
  try {
    JSON.parse(t);
    return true;
  } catch {
    return false;
  }
}

Deno.test({
  name:
    "F2 hostile log lines forge no event through the real stream (parser and Chromium); the old serializer does",
  ignore: !BROWSER_AVAILABLE,
  fn: () =>
    withTempDir(async (root) => {
      const w = await buildWorld(root);
      const target = w.homes.intendant!.appendTarget;
      const id = target.key.split(":")[1]!;
      const rig = await startRig(w);
      const ac = new AbortController();
      try {
        const before = Deno.readFileSync(target.path);
        const base = splitCompleteLines(before).lines.length;
        const hostile = hostileLines();
        const appended: Uint8Array[] = [];
        hostile.forEach((h, i) => appended.push(h, benign(i)));
        const all = new Uint8Array(appended.reduce((n, l) => n + l.length + 1, 0));
        let at = 0;
        for (const l of appended) {
          all.set(l, at);
          all[at + l.length] = 0x0a;
          at += l.length + 1;
        }
        // What each appended line is, read back exactly as the server splits the file.
        const spans = splitCompleteLines(all, 0, base + 1).lines;
        assert.equal(spans.length, appended.length);
        const expected: Expected[] = spans.map((sp, i) => {
          const text = lineText(all, sp);
          return {
            id: sp.lineNo,
            type: isJson(text) ? "message" : "skipped",
            text,
            benign: i % 2 === 1,
          };
        });
        const lastLine = expected[expected.length - 1]!.id;
        const realStatus = await (await fetch(`${rig.base}api/session/${id}`, {
          headers: { authorization: `Bearer ${rig.token}` },
        })).json().then((d) => d.session.status as string);

        // Client 1: the raw bytes of the stream, through the spec parser.
        const res = await fetch(`${rig.base}api/session/${id}/stream?from_line=${base}`, {
          headers: { authorization: `Bearer ${rig.token}` },
          signal: ac.signal,
        });
        assert.equal(res.status, 200);
        const parser = eventStreamParser();
        const reader = res.body!.getReader();
        const pump = (async () => {
          while (parser.lastEventId !== String(lastLine)) {
            const { value, done } = await reader.read();
            if (done) break;
            parser.push(value);
          }
        })();
        // Client 2: Chromium's EventSource, on the dashboard's origin (cookie auth).
        await rig.open();
        await rig.page.evaluate(
          ({ path }) =>
            new Promise<void>((resolve) => {
              const got: { type: string; data: string; id: string }[] = [];
              (globalThis as unknown as { __got: typeof got }).__got = got;
              const es = new EventSource(path);
              (globalThis as unknown as { __es: EventSource }).__es = es;
              for (const type of ["message", "status", "skipped", "error", "pwned"]) {
                es.addEventListener(type, (ev) => {
                  const m = ev as MessageEvent;
                  got.push({ type, data: String(m.data ?? ""), id: m.lastEventId ?? "" });
                });
              }
              es.onopen = () => resolve();
            }),
          { path: `/api/session/${id}/stream?from_line=${base}` },
        );
        Deno.writeFileSync(target.path, all, { append: true });
        await Promise.race([
          pump,
          new Promise((_, rej) => setTimeout(() => rej(new Error("stream timed out")), 30_000)),
        ]);
        await rig.page.waitForFunction(
          (last) =>
            (globalThis as unknown as { __got: { id: string }[] }).__got.some((e) =>
              e.id === String(last)
            ),
          lastLine,
          { timeout: 30_000 },
        );
        const got = await rig.page.evaluate(() => {
          const g = globalThis as unknown as {
            __got: { type: string; data: string; id: string }[];
            __es: EventSource;
          };
          g.__es.close();
          return g.__got;
        });
        const viaParser = score({
          events: parser.events,
          retries: parser.retries.length,
          expected,
          realStatus,
        });
        const viaChromium = score({
          events: got.map((e) => ({ type: e.type, data: e.data, lastEventId: e.id })),
          retries: 0,
          expected,
          realStatus,
        });
        // Negative control: the old serializer over the same lines, the same parser; the
        // events each line's bytes produce are counted against that line.
        const old = eventStreamParser();
        let forgingLines = 0;
        for (const e of expected) {
          const events = old.events.length;
          const retries = old.retries.length;
          old.push(`id: ${e.id}\ndata: ${e.text}\n\n`);
          const made = old.events.slice(events);
          // The old serializer's one honest outcome: one message, this line's id and text.
          const clean = old.retries.length === retries && made.length === 1 &&
            made[0]!.type === "message" && made[0]!.lastEventId === String(e.id) &&
            made[0]!.data === e.text;
          if (!clean) forgingLines++;
        }
        const control = score({
          events: old.events,
          retries: old.retries.length,
          expected,
          realStatus,
        });
        const n = hostile.length;
        figure(
          "F2",
          `forged events: ${viaParser.forged + viaChromium.forged}/${n}, live view silenced: ${
            viaParser.silenced + viaChromium.silenced
          } (spec parser and Chromium EventSource; control, the old \`data: <line>\` serializer: ${forgingLines}/${n} lines forged ${control.forged} events, live view silenced: ${control.silenced})`,
        );
        assert.deepEqual(viaParser, { forged: 0, silenced: 0 });
        assert.deepEqual(viaChromium, { forged: 0, silenced: 0 });
        // Every line arrived, in order, as exactly one event with its own line number.
        const ids = parser.events.filter((e) => e.type !== "status").map((e) =>
          Number(e.lastEventId)
        );
        assert.deepEqual(ids, expected.map((e) => e.id));
        assert.ok(forgingLines > 0 && control.forged > 0, JSON.stringify(control));
        assert.equal(control.silenced, 1);
      } finally {
        ac.abort();
        await rig.close();
      }
    }),
});
