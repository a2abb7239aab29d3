/**
 * The "Mask secrets" switch in the top bar (so it is at hand on the list, in search and
 * on a session's page alike): ON by default, remembered in this browser
 * (hooks/use_mask_secrets.ts). On, every message text, tool call, search snippet and
 * title shows keys, tokens and passwords as their first 4 characters and their kind
 * (`sk-a…[openai key]`); off shows them as written. Searching still finds a message by
 * its key either way (the index keeps the original), and the Markdown export is always
 * masked.
 */
import { html } from "htm/preact";
import { setMaskSecrets, useMaskSecrets } from "../hooks/use_mask_secrets.ts";

const TIP_ON = "Keys, tokens and passwords show as their first 4 characters and their kind. " +
  "Searching by a key still finds it; exports are always masked.";
const TIP_OFF = "Secrets are shown as written. Exports stay masked.";

/** The switch. */
export function MaskToggle() {
  const on = useMaskSecrets();
  const onChange = (e: Event) => setMaskSecrets((e.currentTarget as HTMLInputElement).checked);
  return html`
    <label class="switch mask-switch" title=${on ? TIP_ON : TIP_OFF}>
      <input type="checkbox" id="mask-secrets" checked=${on} onChange=${onChange} />
      <span>Mask secrets</span>
    </label>
  `;
}
