/**
 * One message hit: role, time, the server's snippet with its highlight ranges (UTF-8
 * byte offsets into the original, converted to string indices by snippetRanges), and
 * badges in plain words: "rewound" (superseded: rolled back or on an abandoned branch),
 * "cut at 256 KiB" (the record was cut at the index's size cap), "subagent". The whole
 * row is a link that opens the detail anchored on the hit (its locator) with the query's
 * words to highlight; it sits above its card's own stretched link. With "Mask secrets" on
 * the snippet is masked and its highlights moved onto the masked text (lib/masking.ts):
 * a search by a key finds its message and marks the masked key. The card clamps the
 * snippet to four lines, so it shows the lines around the first highlight
 * (lib/snippet_focus.ts: in a list or code block the match may be on line 8), with "…"
 * where the shown text starts or stops inside the message. A team hit passes `href` (the
 * remote session's page) instead.
 */
import { html } from "htm/preact";
import type { SearchHit } from "../api_client.ts";
import { RECORD_CAP_KIB, RECORD_CAP_LABEL } from "../lib/format.ts";
import { useMaskSecrets } from "../hooks/use_mask_secrets.ts";
import { cardSnippet } from "../lib/snippet_focus.ts";
import { sessionHref } from "../lib/route.ts";
import { MarkedText } from "./marked_text.ts";
import { RelTime } from "./rel_time.ts";

const BADGES: [keyof SearchHit, string, string, string][] = [
  ["superseded", "badge sup", "rewound", "Rolled back, or on a branch that was abandoned"],
  [
    "truncated",
    "badge",
    RECORD_CAP_LABEL,
    `Only the first ${RECORD_CAP_KIB} KiB of this message is indexed`,
  ],
  ["subagent", "badge", "subagent", "Said inside a subagent"],
];

/** Props of {@link HitRow}. */
export interface HitRowProps {
  sessionKey: string;
  hit: SearchHit;
  /** The query the hit answers (its words get highlighted in the detail). */
  q: string;
  /** Where the row leads instead of the local detail (a team hit's remote session). */
  href?: string;
}

/** A hit. */
export function HitRow({ sessionKey, hit, q, href: remote }: HitRowProps) {
  const href = remote ?? sessionHref(sessionKey, { locate: hit.locator, q });
  const snippet = cardSnippet(hit, useMaskSecrets());
  const badges = BADGES.filter(([k]) => hit[k] === true).map(([, cls, label, tip]) =>
    html`<span class=${cls} title=${tip}>${label}</span>`
  );
  return html`
    <li class="hit-item">
      <a class=${hit.superseded ? "hit superseded" : "hit"} href=${href} data-role=${hit.role}
        data-result="">
        <span class="hit-meta">
            <span class=${`role role-${hit.role}`}>${hit.role}</span>
            <${RelTime} ms=${hit.ts_ms} />
            ${badges}
          </span>
        <span class="snippet">${snippet.lead}<${MarkedText} text=${snippet.text}
          ranges=${snippet.ranges} />${snippet.tail}</span>
      </a>
    </li>
  `;
}
