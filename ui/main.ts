/**
 * The dashboard's entry point (bundled by build.ts into /app.js): mounts the app into
 * #app. The page (index.html) loads this as an external module script, since the CSP
 * allows no inline script.
 */
import { html } from "htm/preact";
import { render } from "preact";
import { App } from "./components/app.ts";

const root = document.getElementById("app");
if (root) render(html`<${App} />`, root);
