import assert from "node:assert/strict";
import type { ComponentChildren, VNode } from "preact";
import { maskedForm } from "../../lib/secrets/mod.ts";
import { plantedKeys } from "../../tests/helpers/secret_keys.ts";
import { renderMarkdown } from "../lib/md_render.ts";
import { renderMasked } from "./rich_text.ts";

/** The rendered text, with each element's tag around its content: `<em>x</em>`. */
function flat(c: ComponentChildren): string {
  if (c === null || c === undefined || typeof c === "boolean") return "";
  if (typeof c === "string" || typeof c === "number") return String(c);
  if (Array.isArray(c)) return c.map(flat).join("");
  const v = c as VNode<{ children?: ComponentChildren }>;
  const inner = flat(v.props.children);
  return typeof v.type === "string" && v.type !== "div" ? `<${v.type}>${inner}</${v.type}>` : inner;
}

const key = (kind: string) => plantedKeys().find((k) => k.kind === kind)!.secret;

Deno.test("renderMasked() masks per leaf, so a masked form never changes the formatting", () => {
  const npm = key("npm token");
  const text = `Set //registry.npmjs.org/:_authToken=${npm} and *retry* in \`${npm}\`.`;
  const shown = flat(renderMasked(text, []));
  const m = maskedForm(npm, "npm token");
  assert.equal(
    shown,
    `<p>Set //registry.npmjs.org/:_authToken=${m} and <em>retry</em> in <code>${m}</code>.</p>`,
  );
  // Masking the source first would have let `_…npm_` become an emphasis.
  assert.equal(flat(renderMarkdown(text)).replaceAll(npm, m), shown);
});

Deno.test("renderMasked() masks a private key block; a link holding a secret loses its href", () => {
  const keys = plantedKeys();
  const pem = keys.find((k) => k.kind === "private key")!;
  const shown = flat(renderMasked(pem.line, []));
  for (const line of pem.secret.split("\n").slice(1, -1)) assert.ok(!shown.includes(line), line);
  const pass = key("url password");
  const url = `https://deploy:${pass}@git.example.org/repo`;
  for (const text of [`clone ${url} now`, `clone [the repo](${url}) now`]) {
    const out = renderMasked(text, []);
    assert.ok(!flat(out).includes(pass), text);
    assert.ok(
      !JSON.stringify(out, (k, v) => k === "__" || k === "_owner" ? undefined : v)
        .includes(pass),
      `href of ${text}`,
    );
  }
});

Deno.test("renderMasked() marks the masked key a term matched", () => {
  const gh = key("github token");
  const shown = flat(renderMasked(`use ${gh} now`, [gh]));
  assert.equal(shown, `<p>use <mark>${maskedForm(gh, "github token")}</mark> now</p>`);
});

Deno.test("renderMasked() keeps the formatting next to a secret held by a link", () => {
  const gh = key("github token");
  const npm = key("npm token");
  const text = `push https://${gh}@github.com/o/r then :_authToken=${npm} and _done_`;
  const shown = flat(renderMasked(text, []));
  assert.ok(shown.includes(`:_authToken=${maskedForm(npm, "npm token")} and <em>done</em>`), shown);
  assert.ok(
    shown.includes(`<a>https://${maskedForm(gh, "github token")}@github.com/o/r</a>`),
    shown,
  );
});
