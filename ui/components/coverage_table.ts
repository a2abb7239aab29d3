/**
 * Coverage in full: per source, indexed sessions and messages, the oldest and newest
 * indexed message, sessions whose source file was deleted, skipped input in plain words
 * (ui/lib/skip_reasons.ts; the reason code stays in the tooltip) and sweep errors; then
 * the legacy matrix — what sessions written before the message lane can ever yield — in
 * the server's words. Internal figures (the index revision) are not shown as text: they
 * sit in the table's tooltip for bug reports.
 */
import { html } from "htm/preact";
import type { Coverage, Source } from "../api_client.ts";
import { SOURCE_LABEL, SOURCE_LIST } from "../lib/sources.ts";
import { skipReasonText } from "../lib/skip_reasons.ts";
import { RelTime } from "./rel_time.ts";

const COLUMNS = [
  "Source",
  "Sessions",
  "Messages",
  "Oldest",
  "Newest",
  "Source file deleted",
  "Skipped",
];

function row(c: Coverage, s: Source) {
  const x = c.sources[s];
  if (!x) return null;
  const skipped = Object.entries(x.skipped).map(([k, n]) =>
    html`<span class="skipn" title=${k}>${skipReasonText(k)}: ${n.toLocaleString()}</span>`
  );
  const errors = x.errors.map((e) => html`<span class="skipn err">${e}</span>`);
  return html`
    <tr>
      <th scope="row">${SOURCE_LABEL[s]}</th>
      <td>${x.sessions.toLocaleString()}</td>
      <td>${x.records.toLocaleString()}</td>
      <td>
        <${RelTime} ms=${x.oldest_ts_ms} />
      </td>
      <td>
        <${RelTime} ms=${x.newest_ts_ms} />
      </td>
      <td>${x.source_gone.toLocaleString()}</td>
      <td>${skipped.length ? skipped : "—"} ${errors}</td>
    </tr>
  `;
}

/** The table. */
export function CoverageTable({ coverage: c }: { coverage: Coverage }) {
  const caption = c.window_days !== null
    ? `What the index holds from the last ${c.window_days} days`
    : "What the index holds";
  const legacy = `askHuman answers — ${c.legacy.ask_human_answers}; follow-ups — ${
    c.legacy.follow_ups.replace("_", " ")
  }. ${c.legacy.note}`;
  return html`
    <div class="table-wrap">
      <table class="cov-table" title=${`index revision ${c.revision}`}>
        <caption>${caption}</caption>
        <thead>
          <tr>${COLUMNS.map((h) => html`<th scope="col">${h}</th>`)}</tr>
        </thead>
        <tbody>${SOURCE_LIST.map((s) => row(c, s))}</tbody>
      </table>
    </div>
    <p class="legacy"><strong>Legacy sessions:</strong> ${legacy}</p>
  `;
}
