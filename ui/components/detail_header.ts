/**
 * The detail view's header: back link, title with inline rename, source / status /
 * source-gone / live badges, the facts (project, times, message count, id), and the two
 * actions: copy the resume command (navigator.clipboard; when the browser refuses, the
 * command's field is selected so Ctrl+C / ⌘C copies it) and Export as Markdown (built
 * client-side from the session's entries, downloaded through a Blob URL; always masked,
 * whatever the "Mask secrets" switch says — a file leaves the dashboard). The title and
 * project follow the switch.
 */
import { html } from "htm/preact";
import { useRef, useState } from "preact/hooks";
import type { DetailEntry, SessionSummary } from "../api_client.ts";
import { plural } from "../lib/format.ts";
import { useMaskSecrets } from "../hooks/use_mask_secrets.ts";
import { markdownFileName, sessionMarkdown } from "../lib/markdown.ts";
import { shownText, shownTitle, shownTitleText } from "../lib/masking.ts";
import { RelTime } from "./rel_time.ts";
import { RenameField } from "./rename_field.ts";
import { DeleteButton } from "./delete_button.ts";
import { VaultRestoreButton } from "./vault_restore.ts";
import { SourceBadge } from "./source_badge.ts";
import { backToListHref } from "../lib/route.ts";

/** Props of {@link DetailHeader}. */
export interface DetailHeaderProps {
  session: SessionSummary;
  total: number;
  live: "off" | "open" | "reconnecting";
  loadAll(): Promise<DetailEntry[]>;
  onRenamed(name: string | null): void;
}

const GONE_TIP =
  "Its agent deleted the source files; the index still serves its messages, and the vault can put the files back";
const COPY_STATUS = {
  idle: "",
  copied: "Copied to the clipboard",
  manual: "Press Ctrl+C (⌘C) to copy the selected command",
};

function download(name: string, text: string): void {
  const url = URL.createObjectURL(new Blob([text], { type: "text/markdown;charset=utf-8" }));
  const a = document.createElement("a");
  a.href = url;
  a.download = name;
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 60_000);
}

/** The header. */
export function DetailHeader({ session: s, total, live, loadAll, onRenamed }: DetailHeaderProps) {
  const [copy, setCopy] = useState<keyof typeof COPY_STATUS>("idle");
  const [exporting, setExporting] = useState<string | null>(null);
  const cmd = useRef<HTMLInputElement>(null);
  const mask = useMaskSecrets();

  const onCopy = async () => {
    try {
      await navigator.clipboard.writeText(s.resume_command);
      setCopy("copied");
    } catch {
      // No clipboard permission (or no secure context): select the text for the user.
      cmd.current?.focus();
      cmd.current?.select();
      setCopy("manual");
    }
  };
  const onExport = async () => {
    setExporting("Exporting…");
    try {
      download(markdownFileName(s), sessionMarkdown(s, await loadAll(), { total }));
      setExporting(null);
    } catch (err) {
      setExporting(`Export failed: ${(err as Error).message}`);
    }
  };
  const selectAll = (e: FocusEvent) => (e.currentTarget as HTMLInputElement).select();

  const status = s.status && html`<span class=${`status status-${s.status}`}>${s.status}</span>`;
  const gone = s.source_gone && html`<span class="badge warn" title=${GONE_TIP}>source gone</span>`;
  const liveText = live === "open" ? "● live" : "reconnecting…";
  const liveBadge = live !== "off" &&
    html`<span class=${`live live-${live}`} role="status">${liveText}</span>`;
  const shownProject = s.project && shownText(s.project, mask);
  const project = shownProject &&
    html`<span class="project" title=${shownProject}>${shownProject}</span>`;
  return html`
    <header class="detail-head">
      <a class="back" href=${backToListHref()}>← Sessions</a>
      <div class="detail-title">
          <${SourceBadge} source=${s.source} />
          <h1 id="detail-h" tabindex="-1">${shownTitle(s, mask)}</h1>
          <${RenameField} sessionKey=${s.key} name=${s.name} fallback=${shownTitleText(
            s.title ?? s.session_id,
            mask,
          )}
            onRenamed=${onRenamed} />
          ${status} ${gone} ${liveBadge}
          ${s.source_gone && s.source !== "intendant" &&
            html`<${VaultRestoreButton} sessionKey=${s.key} />`}
        </div>
      <p class="detail-meta">
          ${project}
          <span><${RelTime} ms=${s.created_ms} prefix="started " /></span>
          <span><${RelTime} ms=${s.updated_ms} prefix="updated " /></span>
          <span>${plural(s.message_count, "message")}</span>
          <span class="sid">${s.session_id}</span>
        </p>
      <div class="actions">
        <label class="sr-only" for="resume-cmd">Resume command</label>
        <input id="resume-cmd" ref=${cmd} class="cmd-field" readonly value=${s.resume_command}
          onFocus=${selectAll} />
        <button type="button" class="btn" id="copy-resume" onClick=${onCopy}>
            Copy resume command
          </button>
        <button type="button" class="btn" id="export-md" onClick=${onExport}
          disabled=${exporting === "Exporting…"}>Export as Markdown</button>
        <span class="action-status" role="status">${exporting ?? COPY_STATUS[copy]}</span>
        ${s.source === "intendant" && html`<${DeleteButton} session=${s} />`}
      </div>
    </header>
  `;
}
