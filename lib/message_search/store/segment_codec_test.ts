/**
 * The binary segment codec (segment_encode.ts, segment_view.ts): every record field
 * round-trips exactly (Unicode, lone surrogates, 256 KiB texts, empty segments, every
 * locator kind); blocks hold the folded records the scan expects; the encoder refuses
 * exactly what the record schema refuses; every checksum catches a flipped byte of its
 * section; and the decoder, fuzzed with garbage, truncations, flips and re-sealed
 * mutations (checksums recomputed, so the structure checks are what stands), throws
 * CorruptGenerationError and nothing else.
 */
import assert from "node:assert/strict";
import { rec } from "../query/_test_support.ts";
import { isDeepStrictEqual } from "node:util";
import fc from "fast-check";
import { STRESS } from "../../../tests/helpers/figures.ts";
import { encodeLocator, type Locator } from "../locator.ts";
import { type MessageRecord, MessageRecordSchema, SOURCES } from "../record.ts";
import { fold } from "../query/fold.ts";
import { CorruptGenerationError } from "./generation_error.ts";
import { encodeSegment } from "./segment_encode.ts";
import {
  B_END,
  B_FIRST,
  B_FOLDED_CRC,
  B_FOLDED_LEN,
  B_FOLDED_OFF,
  B_PAYLOAD_CRC,
  BLOCK_FIELDS,
  BLOCKS,
  columnLayout,
  COLUMNS,
  crcOf,
  FOLDED,
  H_BLOCKS,
  H_CRC,
  H_CRCS,
  H_RECORDS,
  H_TABLE,
  HEADER_BYTES,
  PAYLOAD,
  SECTION_COUNT,
  SECTION_NAMES,
} from "./segment_layout.ts";
import { decodeRecords, decodeSegment, type SegmentView } from "./segment_view.ts";
import { SEGMENT_SCHEMA, type ShardSegment } from "./types.ts";

const SEED = Number(Deno.env.get("INTENDANT_SEED") ?? "1601");

function segOf(records: MessageRecord[], o: Partial<ShardSegment> = {}): ShardSegment {
  return { schema: SEGMENT_SCHEMA, parser_version: 7, key: "pi:s", records, marks: [], ...o };
}

function roundTrip(seg: ShardSegment): SegmentView {
  const e = encodeSegment(seg);
  const v = decodeSegment(e.bytes, e.name);
  assert.deepEqual(decodeRecords(v), seg.records);
  assert.deepEqual(v.marks, seg.marks);
  assert.equal(v.key, seg.key);
  assert.equal(v.parserVersion, seg.parser_version);
  assert.equal(v.count, seg.records.length);
  return v;
}

/** The folded texts of a block's records, from the records themselves (an oracle). */
function expectedBlocks(v: SegmentView, records: MessageRecord[]): void {
  for (let k = 0; k < v.blockCount; k++) {
    const want = records.slice(v.blockFirst(k), v.blockEnd(k)).map((r) => fold(r.text));
    assert.equal(v.blockText(k), want.join("\u0000"), `block ${k}`);
  }
}

const base = rec;

Deno.test("every record field round-trips: Unicode, lone surrogates, 256 KiB, every locator kind", () => {
  const big = "ascii text ".repeat(24_000).slice(0, 256 * 1024);
  const bigWide = "東京の空 ".repeat(20_000).slice(0, 87_000);
  const locs: Locator[] = [
    { v: 1, kind: "native_message_id", message_seq: 2 ** 40, line: 1, hash: "0123456789abcdef" },
    { v: 1, kind: "native_event", line: 99, hash: "fedcba9876543210" },
    {
      v: 1,
      kind: "native_sidecar_span",
      file: "turns/t\ud800.txt",
      offset: 0,
      len: 12,
      line: 3,
      hash: "00ff00ff00ff00ff",
    },
    {
      v: 1,
      kind: "external_record_id",
      record_id: "other id",
      file: "f.jsonl",
      hash: "1".repeat(16),
    },
    {
      v: 1,
      kind: "external_line",
      file: "ü/🍪.jsonl",
      generation: 4,
      line: 7,
      hash: "2".repeat(16),
    },
  ];
  const records = [
    base(0, "Un café (NFC) and cafe\u0301 (NFD), Straße, İstanbul, ΣΑΣ"),
    base(1, "lone \ud800 high and \udc00 low surrogates", { id: "id\udfff", item_id: "it\ud801" }),
    base(2, "", { seq: 0, user_turn: 0, item_id: "", truncated: true, subagent: true }),
    base(3, "東京 and an emoji 🍪 and C1 \u0085 and nbsp\u00a0°", { seq: 2 ** 50, user_turn: 5 }),
    base(4, big, { truncated: true, generation: 0xffffffff, order: 4 }),
    base(5, bigWide),
    base(6, "NUL\u0000inside", { source: "codex", session_id: "other session" }),
    base(12, "MiXeD CaSe, Digits 0-9 and [Z]{a}. ".repeat(7_000).slice(0, 256 * 1024)),
    base(13, "ALL CAPITALS"),
    ...locs.map((locator, i) => base(7 + i, `Locator ${locator.kind}`, { locator })),
  ];
  const marks: ShardSegment["marks"] = [
    { kind: "record_ids", after_order: 3, ids: ["r1", "x\ud800"] },
    { kind: "seq_cut", after_order: 1, cut_after_seq: 0 },
  ];
  const v = roundTrip(segOf(records, { marks, key: "pi:s\ud800" }));
  expectedBlocks(v, records);
  for (let i = 0; i < records.length; i++) {
    assert.equal(encodeLocator(v.record(i).locator), encodeLocator(records[i]!.locator));
  }
  // Empty segments: nothing, and marks alone.
  assert.equal(roundTrip(segOf([])).blockCount, 0);
  roundTrip(
    segOf([], { marks: [{ kind: "generation_restore", after_order: 9, active_generation: 1 }] }),
  );
});

Deno.test("a block holds records of one width; a long record is a block of its own", () => {
  const records = ["plain ascii", "more ascii", "東京 wide", "naïve is wide too", "tail"]
    .map((t, i) => base(i, t));
  const v = roundTrip(segOf(records));
  // "naïve" folds to n a i U+0308 v e: the combining mark makes it two-byte as well.
  assert.deepEqual(
    Array.from({ length: v.blockCount }, (_, k) => [v.blockFirst(k), v.blockEnd(k)]),
    [[0, 2], [2, 4], [4, 5]],
  );
  expectedBlocks(v, records);
  const long = [base(0, "x".repeat(20_000)), base(1, "short"), base(2, "y".repeat(9_000))];
  const w = roundTrip(segOf(long));
  assert.ok(w.blockCount >= 2);
  expectedBlocks(w, long);
});

const hex16 = fc.stringMatching(/^[0-9a-f]{16}$/);
/** Characters that stress every encoding path: ASCII, Latin-1 (C1 too), wide, astral, lone surrogates. */
const unit = fc.oneof(
  fc.string({ unit: "grapheme", minLength: 1, maxLength: 1 }),
  fc.integer({ min: 0x80, max: 0xff }).map((c) => String.fromCharCode(c)),
  fc.constantFrom("\ud800", "\udfff", "e\u0301", "東", "🍪", "\u0000", "İ", "Σ"),
);
const text = fc.string({ unit, maxLength: 40 });
const file = fc.string({ unit, minLength: 1, maxLength: 20 });
const locator = fc.oneof(
  fc.record({
    v: fc.constant(1),
    kind: fc.constant("native_message_id"),
    message_seq: fc.nat(),
    line: fc.integer({ min: 1 }),
    hash: hex16,
  }),
  fc.record({
    v: fc.constant(1),
    kind: fc.constant("native_event"),
    line: fc.integer({ min: 1 }),
    hash: hex16,
  }),
  fc.record({
    v: fc.constant(1),
    kind: fc.constant("native_sidecar_span"),
    file,
    offset: fc.nat(),
    len: fc.nat(),
    line: fc.integer({ min: 1 }),
    hash: hex16,
  }),
  fc.record({
    v: fc.constant(1),
    kind: fc.constant("external_record_id"),
    record_id: file,
    file,
    hash: hex16,
  }),
  fc.record({
    v: fc.constant(1),
    kind: fc.constant("external_line"),
    file,
    generation: fc.nat(),
    line: fc.integer({ min: 1 }),
    hash: hex16,
  }),
);
const record = fc.record(
  {
    id: fc.string({ unit, minLength: 1, maxLength: 12 }),
    source: fc.constantFrom(...SOURCES),
    session_id: fc.constantFrom("s", "t\ud800", "ü"),
    role: fc.constantFrom("user", "assistant"),
    ts_ms: fc.integer({ min: -(2 ** 52), max: 2 ** 52 }),
    text,
    truncated: fc.boolean(),
    locator,
    order: fc.nat(),
    seq: fc.nat(),
    user_turn: fc.nat(),
    item_id: fc.string({ unit, maxLength: 8 }),
    generation: fc.nat(),
    subagent: fc.boolean(),
  },
  {
    requiredKeys: [
      "id",
      "source",
      "session_id",
      "role",
      "ts_ms",
      "text",
      "truncated",
      "locator",
      "order",
      "generation",
      "subagent",
    ],
  },
).map((r) => ({ ...r, locator: { ...r.locator } })) as fc.Arbitrary<MessageRecord>;

Deno.test("property: decode(encode(records)) is the records, and blocks hold their folded texts", () => {
  fc.assert(
    fc.property(fc.array(record, { maxLength: 30 }), (records) => {
      const v = roundTrip(segOf(records));
      expectedBlocks(v, records);
    }),
    { numRuns: STRESS ? 5_000 : 400, seed: SEED },
  );
});

Deno.test("property: the encoder refuses a record exactly when the record schema does", () => {
  const bad = fc.constantFrom(null, -1, 1.5, "", "x".repeat(600), "nope", true, 2 ** 60, {}, []);
  let refused = 0;
  fc.assert(
    fc.property(record, fc.nat(), bad, (r, pick, b) => {
      const c = structuredClone(r) as unknown as Record<string, unknown>;
      const target = pick % 2 === 0 ? c : c.locator as Record<string, unknown>;
      const keys = Object.keys(target);
      target[keys[pick % keys.length]!] = b;
      const zod = MessageRecordSchema.safeParse(c);
      let threw = false;
      try {
        encodeSegment(segOf([c as unknown as MessageRecord]));
      } catch (err) {
        assert.ok(err instanceof TypeError, String(err));
        threw = true;
      }
      if (threw) refused++;
      assert.equal(threw, !zod.success, `zod ${zod.success}, encoder threw ${threw}`);
    }),
    { numRuns: STRESS ? 5_000 : 500, seed: SEED },
  );
  assert.ok(refused > 100, `refused ${refused}`);
  assert.throws(() => encodeSegment(segOf([], { marks: [{ kind: "nope" }] as never })), TypeError);
});

/** Offsets and lengths of each section, from the header's table. */
function sectionsOf(bytes: Uint8Array): { off: number; len: number }[] {
  const dv = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  return Array.from({ length: SECTION_COUNT }, (_, s) => ({
    off: Number(dv.getBigUint64(H_TABLE + 16 * s, true)),
    len: Number(dv.getBigUint64(H_TABLE + 16 * s + 8, true)),
  }));
}

/**
 * Recomputes every crc (sections', then blocks' where the table still points inside the
 * file), so a mutation survives the checksums and meets the structure checks.
 */
function reseal(bytes: Uint8Array): Uint8Array {
  const dv = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const secs = sectionsOf(bytes);
  const inside = (a: number, b: number) => a >= 0 && a <= b && b <= bytes.length;
  const n = dv.getUint32(H_RECORDS, true);
  const b = dv.getUint32(H_BLOCKS, true);
  const { off: bo, len: bl } = secs[BLOCKS]!;
  if (inside(bo, bo + bl) && bl === b * BLOCK_FIELDS * 4 && b < 1e5 && n < 1e6) {
    const u32 = (at: number) => (at + 4 <= bytes.length ? dv.getUint32(at, true) : -1);
    const payOff = secs[COLUMNS]!.off + columnLayout(n).payOff;
    for (let k = 0; k < b; k++) {
      const x = bo + 4 * k * BLOCK_FIELDS;
      const fs = secs[FOLDED]!.off + u32(x + 4 * B_FOLDED_OFF);
      const fe = fs + u32(x + 4 * B_FOLDED_LEN);
      if (inside(fs, fe)) dv.setUint32(x + 4 * B_FOLDED_CRC, crcOf(bytes.subarray(fs, fe)), true);
      const ps = secs[PAYLOAD]!.off + u32(payOff + 4 * u32(x + 4 * B_FIRST));
      const pe = secs[PAYLOAD]!.off + u32(payOff + 4 * u32(x + 4 * B_END));
      if (inside(ps, pe)) dv.setUint32(x + 4 * B_PAYLOAD_CRC, crcOf(bytes.subarray(ps, pe)), true);
    }
  }
  secs.forEach(({ off, len }, s) => {
    if (s !== FOLDED && s !== PAYLOAD && inside(off, off + len)) {
      dv.setUint32(H_CRCS + 4 * s, crcOf(bytes.subarray(off, off + len)), true);
    }
  });
  dv.setUint32(H_CRC, crcOf(bytes.subarray(0, H_CRC)), true);
  return bytes;
}

/** Reads everything a reader can: every block's text, every record, whole. */
function readAll(v: SegmentView): void {
  for (let k = 0; k < v.blockCount; k++) v.blockText(k);
  for (let i = 0; i < v.count; i++) v.record(i);
  decodeRecords(v);
}

const sample = (() => {
  const records = [
    base(0, "hello world"),
    base(1, "東京 wide"),
    base(2, "lone \ud800", { item_id: "i", seq: 3, user_turn: 1 }),
    base(3, "x".repeat(10_000), { source: "kimi" }),
  ];
  return encodeSegment(
    segOf(records, { marks: [{ kind: "record_ids", after_order: 2, ids: ["r0"] }] }),
  );
})();

Deno.test("every checksum catches a flipped byte anywhere in its section or block, padding too", () => {
  const secs = sectionsOf(sample.bytes);
  const rejects = (fn: () => unknown, want: RegExp) =>
    assert.throws(fn, (err: unknown) => {
      assert.ok(err instanceof CorruptGenerationError, String(err));
      assert.match(err.message, want);
      return true;
    });
  const flipped = (at: number) => {
    const b = sample.bytes.slice();
    b[at] = b[at]! ^ 0x10;
    return b;
  };
  const flipAt = (at: number, want: RegExp) => rejects(() => decodeSegment(flipped(at), "x"), want);
  for (const at of [0, 9, 20, 40, H_TABLE + 3, H_CRC, HEADER_BYTES - 1]) {
    flipAt(at, at === 0 ? /not a segment file/ : /header checksum|reserved/);
  }
  for (let s = 0; s < SECTION_COUNT; s++) {
    const { off, len } = secs[s]!;
    assert.ok(len > 0, `${SECTION_NAMES[s]} is not empty in the sample`);
    for (const at of [off, off + (len >> 1), off + len - 1]) {
      if (s === FOLDED || s === PAYLOAD) {
        // Per block: at decode when asked for all, else when the block is first read.
        const what = s === FOLDED
          ? /folded text of block \d+: checksum/
          : /payload of block \d+: checksum/;
        flipAt(at, what);
        const lazy = decodeSegment(flipped(at), "x", { verify: "lazy" });
        rejects(() => readAll(lazy), what);
      } else flipAt(at, new RegExp(`${SECTION_NAMES[s]} section checksum`));
    }
    const gapEnd = s + 1 < SECTION_COUNT ? secs[s + 1]!.off : off + len;
    for (let at = off + len; at < gapEnd; at++) flipAt(at, /padding/);
  }
  // Truncation and extension are caught too.
  assert.throws(
    () => decodeSegment(sample.bytes.subarray(0, sample.bytes.length - 1), "x"),
    CorruptGenerationError,
  );
  const longer = new Uint8Array(sample.bytes.length + 8);
  longer.set(sample.bytes);
  assert.throws(() => decodeSegment(longer, "x"), CorruptGenerationError);
});

Deno.test("a view over unaligned bytes decodes the same (the decoder copies them)", () => {
  const shifted = new Uint8Array(sample.bytes.length + 3);
  shifted.set(sample.bytes, 3);
  const a = decodeRecords(decodeSegment(shifted.subarray(3), sample.name));
  assert.deepEqual(a, decodeRecords(decodeSegment(sample.bytes, sample.name)));
});

Deno.test("fuzz: garbage, truncated, flipped and re-sealed bytes throw CorruptGenerationError only", () => {
  const seeds = [
    sample,
    encodeSegment(segOf([])),
    encodeSegment(segOf(["a", "b\u00e9", "c東"].map((t, i) => base(i, t)))),
  ];
  const kinds = { garbage: 0, truncated: 0, flipped: 0, resealed: 0 };
  const outcome = { whole: 0, corrupt: 0, other: 0 };
  const input = fc.oneof(
    fc.uint8Array({ maxLength: 600 }).map((b) => ({ kind: "garbage" as const, b })),
    fc.tuple(fc.nat(2), fc.nat()).map(([s, at]) => {
      const src = seeds[s]!.bytes;
      return { kind: "truncated" as const, b: src.slice(0, at % src.length) };
    }),
    fc.tuple(
      fc.nat(2),
      fc.array(fc.tuple(fc.nat(), fc.integer({ min: 1, max: 255 })), {
        minLength: 1,
        maxLength: 4,
      }),
    )
      .map(([s, flips]) => {
        const b = seeds[s]!.bytes.slice();
        for (const [at, x] of flips) b[at % b.length] = b[at % b.length]! ^ x;
        return { kind: "flipped" as const, b };
      }),
    fc.tuple(
      fc.nat(2),
      fc.array(fc.tuple(fc.nat(), fc.integer({ min: 0, max: 255 })), {
        minLength: 1,
        maxLength: 4,
      }),
    ).map(([s, sets]) => {
      const b = seeds[s]!.bytes.slice();
      // Past the magic and format, so the structure checks (not the prologue) are what stands.
      for (const [at, x] of sets) b[12 + (at % (b.length - 12))] = x;
      return { kind: "resealed" as const, b: reseal(b) };
    }),
  );
  fc.assert(
    fc.property(input, fc.boolean(), ({ kind, b }, lazy) => {
      kinds[kind]++;
      try {
        readAll(decodeSegment(b, "0123456789abcdef.seg", { verify: lazy ? "lazy" : "all" }));
        outcome.whole++;
      } catch (err) {
        if (err instanceof CorruptGenerationError) outcome.corrupt++;
        else {
          outcome.other++;
          throw err;
        }
      }
    }),
    { numRuns: STRESS ? 200_000 : 8_000, seed: SEED },
  );
  const total = Object.values(kinds).reduce((a, b) => a + b, 0);
  // deno-lint-ignore no-console
  console.log(
    `FUZZ segment: inputs: ${total} (garbage ${kinds.garbage}, truncated ${kinds.truncated}, ` +
      `flipped ${kinds.flipped}, re-sealed ${kinds.resealed}), decoded whole: ${outcome.whole}, ` +
      `CorruptGenerationError: ${outcome.corrupt}, other throws: ${outcome.other}, seed ${SEED}`,
  );
  assert.equal(outcome.other, 0);
  assert.ok(outcome.corrupt > total / 2);
  assert.ok(
    isDeepStrictEqual(Object.keys(kinds).every((k) => kinds[k as keyof typeof kinds] > 0), true),
  );
});

Deno.test("strings that begin with U+FEFF round-trip: ids, locators, item ids and texts", () => {
  // The reliability fuzz (Droid, seed 852697107) met a message id of "\uFEFF": a UTF-8
  // decoder that strips a leading BOM read it back as "", and the segment as corrupt.
  const records = [
    rec(0, "\uFEFFbom at the start, ascii", {
      id: "\uFEFF",
      item_id: "\uFEFFitem",
      locator: {
        v: 1,
        kind: "external_record_id",
        record_id: "\uFEFF",
        file: "\uFEFFf.jsonl",
        hash: "0".repeat(16),
      },
    }),
    rec(1, "\uFEFFcafé 東京", { id: "\uFEFFr1" }),
  ];
  roundTrip(segOf(records));
});
