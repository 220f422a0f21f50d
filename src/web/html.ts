/**
 * @module HTML building blocks for the pages: a template in which every interpolation is escaped
 * (escape-html.ts), and the page layout. Pages carry no inline script or style, so the Content-Security-
 * Policy can forbid both (see src/http/security-headers.ts).
 */

import { escapeHtml } from '../escape-html.js';

/** Markup that is already safe: built only from literals and escaped values. */
export class SafeHtml {
  constructor(readonly value: string) {}
  toString(): string {
    return this.value;
  }
}

/**
 * Tagged template that escapes every interpolated value unless it is SafeHtml (or an array of
 * them), so a page cannot forget to escape.
 */
export function html(strings: TemplateStringsArray, ...values: unknown[]): SafeHtml {
  let out = strings[0] ?? '';
  values.forEach((value, index) => {
    out += renderValue(value) + (strings[index + 1] ?? '');
  });
  return new SafeHtml(out);
}

function renderValue(value: unknown): string {
  if (value instanceof SafeHtml) return value.value;
  if (Array.isArray(value)) return value.map(renderValue).join('');
  if (value === null || value === undefined || value === false) return '';
  return escapeHtml(String(value));
}

export interface LayoutOptions {
  /** The page's own title; " · Gatehouse" is appended. */
  title: string;
  /** Names the page for the script (`data-page`). */
  page: string;
  devMode: boolean;
  /** Server-rendered message shown in the message area (from the query, for example). */
  message?: { kind: 'error' | 'success'; text: string } | undefined;
  body: SafeHtml;
  /** Same-origin scripts of this page beside /assets/app.js, run after it. */
  scripts?: readonly string[];
}

/**
 * The message area is always present and keeps its height when empty, so an error appearing
 * never moves the form under the person's pointer; role="alert" makes screen readers announce
 * whatever the script or the server puts in it.
 */
export function messageArea(message?: LayoutOptions['message']): SafeHtml {
  const kind = message ? ` message--${message.kind}` : '';
  return html`<div id="message" class="message${new SafeHtml(kind)}" role="alert" tabindex="-1">${message?.text ?? ''}</div>`;
}

export function renderLayout(options: LayoutOptions): string {
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>${options.title} · Gatehouse</title>
<link rel="icon" href="data:,">
<link rel="stylesheet" href="/assets/app.css">
<script src="/assets/app.js" defer></script>
${(options.scripts ?? []).map((src) => html`<script src="${src}" defer></script>\n`)}</head>
<body data-page="${options.page}" data-dev-mode="${options.devMode ? 'true' : 'false'}">
<a class="skip-link" href="#main">Skip to the form</a>
<header class="site-header"><span class="brand">Gatehouse</span></header>
<main id="main" class="card">
<h1>${options.title}</h1>
<noscript><p class="notice">These pages need JavaScript to talk to the server. Turn it on and reload the page.</p></noscript>
${messageArea(options.message)}
${options.body}
</main>
</body>
</html>
`.value;
}
