/**
 * @module The per-request part of a page's context: its language (negotiated from `?lang=`, the
 * `gatehouse_lang` cookie, Accept-Language, then DEFAULT_LANGUAGE), the cookie that remembers a
 * `?lang=` choice, and the messages the page scripts get in their JSON data block.
 */
import type { Context } from 'hono';
import { getCookie } from 'hono/cookie';
import { CATALOGS } from '../i18n/catalogs/index.js';
import { isSupportedLanguage, SUPPORTED_LANGUAGES, type Language } from '../i18n/languages.js';
import { LANGUAGE_COOKIE, languageCookie, languageFromAcceptLanguage, negotiatePageLanguage } from '../i18n/negotiate.js';
import { translator } from '../i18n/translator.js';
import type { AppEnv } from '../http/env.js';
import type { PageContext, SafeHtml } from './html.js';

export interface PageContextSettings {
  devMode: boolean;
  appName: string;
  defaultLanguage: Language;
  /** BASE_URL is https: the language cookie is Secure. */
  httpsBaseUrl: boolean;
  /** The brand's markup, built once from the configuration (web/routes.ts): the same on every page. */
  brandHead: SafeHtml;
  brandMark: SafeHtml;
}

/** i18next's plural suffixes (CLDR categories). */
const PLURAL_SUFFIX = /_(zero|one|two|few|many|other)$/;

/**
 * The scripts' messages of one language: every `script.*` key (English where the catalog lacks
 * it), and the `error.<code>` texts only where the language's own catalog has them. In English
 * the server's message is shown as it is: it is English already and often more specific (a
 * validation error names the field) than the catalog's text for its code.
 */
function scriptMessagesOf(lang: Language): Readonly<Record<string, string>> {
  const own = CATALOGS[lang];
  const english = CATALOGS.en;
  const categories = new Intl.PluralRules(lang).resolvedOptions().pluralCategories;
  const messages: Record<string, string> = {};
  // Raw texts, {{slots}} and all: the script fills them, and picks a plural form with
  // Intl.PluralRules, so each of the language's forms is sent (English's `other` where missing).
  for (const key of Object.keys(english)) {
    if (key.startsWith('error.')) {
      if (lang !== 'en' && Object.hasOwn(own, key)) messages[key] = own[key] ?? '';
      continue;
    }
    if (!key.startsWith('script.')) continue;
    const base = key.replace(PLURAL_SUFFIX, '');
    if (base === key) {
      messages[key] = own[key] ?? english[key] ?? key;
      continue;
    }
    for (const form of categories) {
      const full = `${base}_${form}`;
      messages[full] = own[full] ?? english[full] ?? english[`${base}_other`] ?? key;
    }
  }
  return Object.freeze(messages);
}

const SCRIPT_MESSAGES: ReadonlyMap<Language, Readonly<Record<string, string>>> = new Map(SUPPORTED_LANGUAGES.map((lang) => [lang, scriptMessagesOf(lang)]));

/** What a page's context reads of its request: Hono's context here, the OpenID Connect engine's elsewhere. */
export interface PageRequest {
  url: string;
  query(name: string): string | undefined;
  cookie(name: string): string | undefined;
  header(name: string): string | undefined;
  appendHeader(name: string, value: string): void;
}

/**
 * The page's own address for the language switcher's links, with only the query parameters the
 * page reads and which cannot carry prose: text from someone else's link must not be repeated.
 * return_to is the page's resolved one (already checked to be a path on this origin).
 */
function switcherUrl(requestUrl: string, returnTo: string | undefined): URL {
  const requested = new URL(requestUrl);
  const url = new URL(requested.pathname, requested.origin);
  for (const name of ['token', 'mfa', 'error', 'provider', 'signed_out']) {
    const value = requested.searchParams.get(name);
    if (value !== null && /^[A-Za-z0-9_-]{1,512}$/.test(value)) url.searchParams.set(name, value);
  }
  if (returnTo !== undefined && requested.searchParams.has('return_to')) url.searchParams.set('return_to', returnTo);
  return url;
}

/** The page's context for this request; sets the language cookie when `?lang=` chose the language. */
export function pageContextOf(c: Context<AppEnv>, settings: PageContextSettings, returnTo?: string): PageContext {
  const request: PageRequest = {
    url: c.req.url,
    query: (name) => c.req.query(name),
    cookie: (name) => getCookie(c, name),
    header: (name) => c.req.header(name),
    appendHeader: (name, value) => c.header(name, value, { append: true }),
  };
  return pageContextFrom(request, settings, returnTo);
}

/** The same, from any request that can be read as a PageRequest. */
export function pageContextFrom(request: PageRequest, settings: PageContextSettings, returnTo?: string): PageContext {
  const signals = { query: request.query('lang'), cookie: request.cookie(LANGUAGE_COOKIE), acceptLanguage: request.header('accept-language') };
  const { lang, fromQuery } = negotiatePageLanguage(signals, settings.defaultLanguage);
  // Chosen by the person, not DEFAULT_LANGUAGE: only then is it worth remembering on the account.
  const chosen = fromQuery || isSupportedLanguage(signals.cookie) || languageFromAcceptLanguage(signals.acceptLanguage) !== null;
  if (fromQuery) request.appendHeader('Set-Cookie', languageCookie(lang, settings.httpsBaseUrl));
  // The language decides the page's text: a cache must not serve one person's language to another.
  request.appendHeader('Vary', 'Cookie, Accept-Language');
  return {
    devMode: settings.devMode,
    appName: settings.appName,
    lang,
    languageChosen: chosen,
    t: translator(lang),
    url: switcherUrl(request.url, returnTo),
    scriptMessages: SCRIPT_MESSAGES.get(lang) ?? {},
    brandHead: settings.brandHead,
    brandMark: settings.brandMark,
  };
}
