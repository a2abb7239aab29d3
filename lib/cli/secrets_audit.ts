/**
 * The secrets audit behind `intendant secrets`: reads EVERY session of the message index
 * (every generation of every manifest entry) and lists, per session, each secret the
 * masker finds, masked, with the message's role, time, flags and locator.
 * Invariants: a secret is never carried out of this module in full — findings hold the
 * masked form and a masked excerpt only; `complete` is true only when every entry was
 * read (a damaged or quarantined shard is listed in `unreadable`, never skipped
 * silently). Reads only: the store is opened as `intendant search` opens it without a
 * daemon, and nothing is published.
 */
import {
  decodeRecords,
  deriveActive,
  encodeLocator,
  type MessageRecord,
  type Store,
  type SupersessionMark,
} from "../message_search/mod.ts";
import { maskedForm, maskSecrets, maskTitle, type SecretSpan } from "../secrets/mod.ts";

/** Characters of masked context kept on each side of a secret in a finding. */
const EXCERPT_SIDE_CHARS = 40;

/** One secret in one message, masked. */
export interface SecretFinding {
  kind: string;
  rule: string;
  /** maskedForm of the secret: first characters + kind. */
  masked: string;
  /** The masked message text around the secret, on one line. */
  excerpt: string;
  role: "user" | "assistant";
  ts_ms: number;
  superseded: boolean;
  subagent: boolean;
  /** The message's base64url locator (what a search hit carries; opens the hit). */
  locator: string;
}

/** One session that holds secrets. */
export interface SessionSecrets {
  session_key: string;
  source: string;
  session_id: string;
  title: string | null;
  project: string | null;
  /** Count per kind. */
  kinds: Record<string, number>;
  findings: SecretFinding[];
}

/** The whole audit. */
export interface SecretsAudit {
  /** True when every session of the index was read. */
  complete: boolean;
  sessions_scanned: number;
  messages_scanned: number;
  sessions: SessionSecrets[];
  /** Sessions whose index data could not be read, and why. */
  unreadable: { session_key: string; reason: string }[];
}

/** Reads the whole index of `store` and audits it. */
export async function auditSecrets(
  store: Store,
  o: { onProgress?: (done: number, total: number) => void } = {},
): Promise<SecretsAudit> {
  const manifest = await store.readManifest();
  const keys = Object.keys(manifest.sessions).sort();
  const out: SecretsAudit = {
    complete: true,
    sessions_scanned: 0,
    messages_scanned: 0,
    sessions: [],
    unreadable: [],
  };
  for (const [i, key] of keys.entries()) {
    o.onProgress?.(i, keys.length);
    const e = manifest.sessions[key]!;
    if (e.quarantined_at_ms !== undefined) {
      out.unreadable.push({ session_key: key, reason: "damaged, waiting to be rebuilt" });
      continue;
    }
    const records: MessageRecord[] = [];
    const marks: SupersessionMark[] = [];
    try {
      for (const g of e.generations) {
        const view = await store.loadSegment(g);
        records.push(...decodeRecords(view));
        marks.push(...view.marks);
      }
    } catch (err) {
      out.unreadable.push({
        session_key: key,
        reason: err instanceof Error ? err.message : String(err),
      });
      continue;
    }
    out.sessions_scanned++;
    out.messages_scanned += records.length;
    const found = auditRecords(records, marks);
    if (found.length === 0) continue;
    const kinds: Record<string, number> = {};
    for (const f of found) kinds[f.kind] = (kinds[f.kind] ?? 0) + 1;
    out.sessions.push({
      session_key: key,
      source: e.source,
      session_id: e.session_id,
      // Free text of the session is printed too: masked like the findings (H2), the
      // title with the cut-edge check (its producer cut the first prompt mid-key).
      title: e.meta.title === null ? null : maskTitle(e.meta.title),
      project: e.meta.project === null ? null : maskSecrets(e.meta.project).text,
      kinds,
      findings: found,
    });
  }
  o.onProgress?.(keys.length, keys.length);
  out.complete = out.unreadable.length === 0;
  // Newest exposure first: the secret pasted last is the one most likely still live.
  const newest = (s: SessionSecrets) => Math.max(...s.findings.map((f) => f.ts_ms));
  out.sessions.sort((a, b) => newest(b) - newest(a) || a.session_key.localeCompare(b.session_key));
  return out;
}

/** The findings of one session's records, in source order. */
export function auditRecords(
  records: readonly MessageRecord[],
  marks: readonly SupersessionMark[],
): SecretFinding[] {
  const active = deriveActive(records, marks);
  const out: SecretFinding[] = [];
  records.forEach((r, i) => {
    for (const m of maskedFindings(r.text)) {
      out.push({
        ...m,
        role: r.role,
        ts_ms: r.ts_ms,
        superseded: !active[i],
        subagent: r.subagent,
        locator: encodeLocator(r.locator),
      });
    }
  });
  return out.sort((a, b) => a.ts_ms - b.ts_ms);
}

/** A secret the masker finds in a text: its kind, its masked form and a masked excerpt. */
export type MaskedFinding = Pick<SecretFinding, "kind" | "rule" | "masked" | "excerpt">;

/**
 * Every secret the masker finds in `text`, masked (the one masking of the audit: the
 * index's messages and the vault's kept lines both go through it).
 */
export function maskedFindings(text: string): MaskedFinding[] {
  const { text: masked, spans } = maskSecrets(text);
  if (spans.length === 0) return [];
  const at = maskedOffsets(text, spans);
  return spans.map((s, k) => {
    const [ms, me] = at[k]!;
    return {
      kind: s.kind,
      rule: s.rule,
      masked: masked.slice(ms, me),
      excerpt: excerptOf(masked, ms, me),
    };
  });
}

/** Where each span's masked form sits in the masked text (UTF-16 offsets). */
function maskedOffsets(text: string, spans: SecretSpan[]): [number, number][] {
  let delta = 0;
  return spans.map((s) => {
    const len = maskedForm(text.slice(s.start, s.end), s.kind).length;
    const start = s.start + delta;
    delta += len - (s.end - s.start);
    return [start, start + len];
  });
}

function excerptOf(masked: string, start: number, end: number): string {
  let from = Math.max(0, start - EXCERPT_SIDE_CHARS);
  let to = Math.min(masked.length, end + EXCERPT_SIDE_CHARS);
  // Cut on code points, never inside a surrogate pair.
  if (isLowSurrogate(masked.charCodeAt(from))) from++;
  if (to < masked.length && isLowSurrogate(masked.charCodeAt(to))) to--;
  const slice = masked.slice(from, to);
  return `${from > 0 ? "…" : ""}${slice.replace(/\s+/g, " ").trim()}${
    to < masked.length ? "…" : ""
  }`;
}

function isLowSurrogate(c: number): boolean {
  return c >= 0xdc00 && c <= 0xdfff;
}
