/**
 * @module HTML building blocks for the pages: a template in which every interpolation is escaped
 * (escape-html.ts), and the page layout. Pages carry no inline script or style, so the Content-Security-
 * Policy can forbid both (see src/http/security-headers.ts).
 */

import { escapeHtml } from '../escape-html.js';
import { directionOf, LANGUAGE_NAMES, SUPPORTED_LANGUAGES, type Language } from '../i18n/languages.js';
import type { MessageVars, Translate } from '../i18n/translator.js';

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

/**
 * What every page is rendered with: the request's language and its lookups, the product's name,
 * and the address the language switcher's links keep.
 */
export interface PageContext {
  devMode: boolean;
  /** APP_NAME: the site header and the title's suffix. */
  appName: string;
  lang: Language;
  /** The language came from the person (?lang=, the cookie, Accept-Language), not DEFAULT_LANGUAGE. */
  languageChosen: boolean;
  t: Translate;
  /** The page's path and query as requested; the switcher's links replace only `lang` in it. */
  url: URL;
  /** Messages the page scripts show, by key (script.*, error.*), sent as a JSON data block. */
  scriptMessages: Readonly<Record<string, string>>;
  /**
   * The brand's stylesheet links, put after the pages' own (brand/brand.ts `brandHead`), and its
   * logo for the header (`brandMark`): empty without BRAND_* settings. Built by the caller, once:
   * the brand module imports this one, so this one cannot import it.
   */
  brandHead: SafeHtml;
  brandMark: SafeHtml;
}

/**
 * A catalog message whose slots take markup (a `<strong>` address, a link): the message's own
 * text is escaped, each SafeHtml value goes in as it is, any other value is escaped. The
 * translator keeps the `{{slot}}` where their language wants it. The markers are private-use
 * characters, which escaping leaves alone and no catalog text contains.
 */
export function tHtml(t: Translate, key: string, vars: Readonly<Record<string, SafeHtml | string | number>>): SafeHtml {
  const markers: MessageVars = Object.fromEntries(Object.keys(vars).map((name, index) => [name, `\uE000${index}\uE001`]));
  const values = Object.values(vars);
  const escaped = escapeHtml(t(key, markers));
  return new SafeHtml(escaped.replace(/\uE000(\d+)\uE001/g, (_, index: string) => renderValue(values[Number(index)])));
}

export interface LayoutOptions {
  ctx: PageContext;
  /** The page's own title; " · APP_NAME" is appended. */
  title: string;
  /** Names the page for the script (`data-page`). */
  page: string;
  /** Server-rendered message shown in the message area (from the query, for example). */
  message?: { kind: 'error' | 'success'; text: string } | undefined;
  body: SafeHtml;
  /** Same-origin scripts of this page beside /assets/app.js, run after it. */
  scripts?: readonly string[];
  /**
   * `same-origin` for a page whose plain HTML form posts to this origin (the consent page): under
   * `no-referrer`, every page's default, a browser sends such a post with `Origin: null`, which the
   * cross-site rule refuses.
   */
  referrerPolicy?: 'no-referrer' | 'same-origin';
}

/**
 * The message area is always present, from the page's start, so role="alert" makes screen readers
 * announce whatever the script or the server puts in it later. Empty, it takes no room (app.css):
 * no band under the heading; shown, it sits between the heading and the form.
 */
export function messageArea(message?: LayoutOptions['message']): SafeHtml {
  const kind = message ? ` message--${message.kind}` : '';
  return html`<div id="message" class="message${new SafeHtml(kind)}" role="alert" tabindex="-1">${message?.text ?? ''}</div>`;
}

/**
 * The scripts' messages as JSON in a data block (type application/json is not run, so the CSP's
 * script-src does not apply). `<` is written as \\u003c, so no string can close the element.
 */
export function scriptMessagesBlock(messages: Readonly<Record<string, string>>): SafeHtml {
  const json = JSON.stringify(messages)
    .replace(/</g, '\\u003c')
    .replace(/\u2028/g, '\\u2028')
    .replace(/\u2029/g, '\\u2029');
  return new SafeHtml(`<script type="application/json" id="page-messages">${json}</script>`);
}

/**
 * Links to this same page in each language, each named in itself (and marked with its own lang).
 * In the footer, after the form: the skip link and the form come first to the keyboard.
 */
export function languageSwitcher(ctx: PageContext): SafeHtml {
  const links = SUPPORTED_LANGUAGES.map((lang) => {
    const target = new URL(ctx.url.href);
    target.searchParams.set('lang', lang);
    const href = `${target.pathname}${target.search}`;
    return lang === ctx.lang
      ? html`<li><a href="${href}" lang="${lang}" hreflang="${lang}" aria-current="true">${LANGUAGE_NAMES[lang]}</a></li>`
      : html`<li><a href="${href}" lang="${lang}" hreflang="${lang}">${LANGUAGE_NAMES[lang]}</a></li>`;
  });
  return html`<nav class="language-switcher" id="language-switcher" aria-label="${ctx.t('layout.languages')}"><ul>${links}</ul></nav>`;
}

export function renderLayout(options: LayoutOptions): string {
  const { ctx } = options;
  const { t } = ctx;
  return html`<!doctype html>
<html lang="${ctx.lang}" dir="${directionOf(ctx.lang)}">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="${options.referrerPolicy ?? 'no-referrer'}">
<title>${options.title} · ${ctx.appName}</title>
<link rel="icon" href="data:,">
<link rel="stylesheet" href="/assets/app.css">
${ctx.brandHead}${scriptMessagesBlock(ctx.scriptMessages)}
<script src="/assets/app.js" defer></script>
${(options.scripts ?? []).map((src) => html`<script src="${src}" defer></script>\n`)}</head>
<body data-page="${options.page}" data-dev-mode="${ctx.devMode ? 'true' : 'false'}">
<a class="skip-link" href="#main">${t('layout.skipLink')}</a>
<header class="site-header"><span class="brand">${ctx.brandMark.value === '' ? ctx.appName : ctx.brandMark}</span></header>
<main id="main" class="card">
<h1>${options.title}</h1>
<noscript><p class="notice">${t('layout.noscript')}</p></noscript>
${messageArea(options.message)}
${options.body}
</main>
<footer class="site-footer">${languageSwitcher(ctx)}</footer>
</body>
</html>
`.value;
}
