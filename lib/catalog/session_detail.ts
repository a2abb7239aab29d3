/**
 * The paged session detail read with jump-to-hit (spec "Jump-to-hit"). Order matters for
 * safety: the `locate=` value is decoded first (malformed → MalformedLocatorError, 400,
 * before anything is read), then the key is checked against its grammar and resolved,
 * and only then is the session read. A well-formed locator never throws: it resolves
 * (the page, when no explicit offset was asked for, is centered on the anchored entry)
 * or degrades to stale/unavailable with the page served exactly as unanchored.
 * entry_index is the anchor's position in the returned entries (outside [0, length)
 * when an explicit offset put it off the page); total_index its position in the full list.
 * With `q`, the answer also lists every entry of the session that matches the query
 * (`hits`, see detail_hits.ts), so the client can step to hits outside the loaded page.
 */
import {
  capText,
  decodeLocator,
  type Locator,
  RECORD_TEXT_CAP_BYTES,
} from "../message_search/mod.ts";
import {
  applyNameOverlays,
  normalizeName,
  readNameOverlays,
  type SessionMeta,
} from "../session_log/mod.ts";
import { externalEntries, loadExternal } from "./external_detail.ts";
import { externalSummary, nativeSummary } from "./list_sessions.ts";
import { type Anchor, locateNative } from "./locate_native.ts";
import { locateExternal } from "./locate_external.ts";
import { findHits, hitNeedles } from "./detail_hits.ts";
import { hydrateNative, nativeShownText, withNativeSpine } from "./native_detail.ts";
import { lastEventMs } from "./native_facts.ts";
import type { NativeSpine } from "./native_page.ts";
import { readPendingQuestion } from "./pending_question.ts";
import { resolveSessionKey } from "./resolve_key.ts";
import {
  type ActivityStatus,
  type CatalogDeps,
  DETAIL_DEFAULT_LIMIT,
  DETAIL_MAX_LIMIT,
  type DetailEntry,
  ENTRY_TEXT_CAP_BYTES,
  type LocateResult,
  MalformedLocatorError,
  type PendingQuestion,
  type SessionDetail,
  type SessionSummary,
} from "./types.ts";

/** Options for {@link sessionDetail}. */
export interface DetailOptions {
  /** Explicit page start; without it a resolved locate centers the page. */
  offset?: number;
  /** @default DETAIL_DEFAULT_LIMIT (at most DETAIL_MAX_LIMIT) */
  limit?: number;
  /** The locator JSON itself, or base64url of it. */
  locate?: string | null;
  /** A search query: the answer lists the indices of every entry matching it (`hits`). */
  q?: string | null;
}

/** Decodes a `locate=` value; MalformedLocatorError when it is not a locator. */
export function parseLocate(param: unknown): Locator {
  if (typeof param !== "string") {
    throw new MalformedLocatorError(
      "Invalid locate: expected the locator of a search hit, as a search result gave it",
    );
  }
  const loc = decodeLocator(param);
  if (!loc) {
    // The value is not quoted (it may be anything a client pasted); its length says enough.
    throw new MalformedLocatorError(
      `Invalid locate (${param.length} characters): this is not a hit's locator; pass the ` +
        "locator a search result gave, unchanged, or open the session without one",
    );
  }
  return loc;
}

function checkPaging(o: DetailOptions): { offset: number | undefined; limit: number } {
  const { offset, limit = DETAIL_DEFAULT_LIMIT } = o;
  if (!Number.isInteger(limit) || limit < 1 || limit > DETAIL_MAX_LIMIT) {
    throw new RangeError(`Invalid limit "${limit}": expected 1-${DETAIL_MAX_LIMIT}`);
  }
  if (offset !== undefined && (!Number.isInteger(offset) || offset < 0)) {
    throw new RangeError(`Invalid offset "${offset}": expected a non-negative integer`);
  }
  return { offset, limit };
}

async function nativeSessionSummary(
  id: string,
  m: NativeSpine,
  meta: SessionMeta | null,
): Promise<SessionSummary> {
  // The listing's definition of updated_ms, so list and detail always agree.
  const last = await lastEventMs(m.dir);
  const updated = last === "missing" ? meta?.created_at_ms ?? null : last;
  const s = nativeSummary({
    id,
    dir: m.dir,
    meta,
    updatedMs: updated ?? meta?.created_at_ms ?? null,
  });
  return { ...s, message_count: m.index.messageCount, parent_session_id: m.index.parent };
}

function pageStart(
  total: number,
  limit: number,
  anchorRow: number | null,
  explicit?: number,
): number {
  if (explicit !== undefined) return explicit;
  if (anchorRow === null) return 0;
  return Math.max(0, Math.min(anchorRow - Math.floor(limit / 2), total - limit));
}

function toResult(a: Anchor, offset: number): LocateResult {
  if (a.state !== "resolved") return a;
  const r: LocateResult = {
    state: "resolved",
    entry_index: a.row - offset,
    total_index: a.row,
    anchor: a.anchor,
  };
  if (a.sameMessage) r.same_message = true;
  return r;
}

/**
 * Names the cap beside each cut flag (text_cap_bytes: the detail's own cut; record_cap_bytes:
 * the index record's), so the view can say "cut at 64 KiB" without owning the constants.
 */
function withCaps(entries: DetailEntry[]): DetailEntry[] {
  for (const e of entries) {
    const d = e.detail as Record<string, unknown> | undefined;
    if (!d || typeof d !== "object") continue;
    if (d.text_truncated === true) d.text_cap_bytes = ENTRY_TEXT_CAP_BYTES;
    if (d.record_truncated === true) d.record_cap_bytes = RECORD_TEXT_CAP_BYTES;
  }
  return entries;
}

/** One session's detail, whatever its source, before paging. */
interface DetailSource {
  session: SessionSummary;
  total: number;
  anchor: Anchor | null;
  page(offset: number): Promise<DetailEntry[]>;
  textAt(i: number): Promise<string | undefined> | string | undefined;
  pending?: PendingQuestion | null;
  activity?: ActivityStatus;
}

/** Reads one page of a session's detail, optionally anchored on a locator. */
export async function sessionDetail(
  d: CatalogDeps,
  key: string,
  o: DetailOptions = {},
): Promise<SessionDetail> {
  const { offset: explicit, limit } = checkPaging(o);
  const loc = o.locate === undefined || o.locate === null ? null : parseLocate(o.locate);
  const s = await resolveSessionKey(d, key);
  const overlays = await readNameOverlays(d.namesPath);
  const paged = (src: DetailSource) => pageOf(src, { explicit, limit, q: o.q, overlays });
  if (s.source === "intendant") {
    // The spine's index and handle are held only while this page is made.
    return await withNativeSpine(s.dir!, s.session_id, async (m, meta) =>
      await paged({
        session: await nativeSessionSummary(s.session_id, m, meta),
        total: m.total,
        anchor: loc ? await locateNative(m, loc) : null,
        page: async (offset) => hydrateNative(m.dir, await m.rows(offset, limit), offset),
        textAt: async (i) =>
          m.hasText(i) ? nativeShownText(m.dir, await m.row(i, { tools: false })) : undefined,
        pending: await readPendingQuestion(m.dir, { meta }),
      }));
  }
  const m = await loadExternal(d.store, s.key, { onDamage: d.onDamage, keptCopy: d.keptCopy });
  return await paged({
    session: externalSummary(s.key, m.entry),
    total: m.rows.length,
    anchor: loc ? locateExternal(m, loc) : null,
    page: (offset) =>
      Promise.resolve(externalEntries(m.rows.slice(offset, offset + limit), offset)),
    textAt: (i) => {
      const r = m.rows[i]!;
      return r.kind === "record" ? capText(r.rec.text, ENTRY_TEXT_CAP_BYTES).text : undefined;
    },
    activity: m.activity,
  });
}

async function pageOf(
  src: DetailSource,
  o: {
    explicit: number | undefined;
    limit: number;
    q: string | null | undefined;
    overlays: Awaited<ReturnType<typeof readNameOverlays>>;
  },
): Promise<SessionDetail> {
  const named = applyNameOverlays([src.session], o.overlays)[0] ?? src.session;
  const session = { ...named, name: normalizeName(named.name) };
  const { anchor, total } = src;
  const anchorRow = anchor?.state === "resolved" ? anchor.row : null;
  const offset = pageStart(total, o.limit, anchorRow, o.explicit);
  const out: SessionDetail = { session, entries: withCaps(await src.page(offset)), offset, total };
  if (anchor) out.locate = toResult(anchor, offset);
  if (src.activity) out.activity = src.activity;
  if (o.q !== undefined && o.q !== null) {
    const needles = hitNeedles(o.q);
    const found = needles
      ? await findHits(total, needles, src.textAt)
      : { hits: [], complete: true };
    out.hits = found.hits;
    out.hits_complete = found.complete;
  }
  if (src.pending !== undefined) out.pending_question = src.pending;
  return out;
}
