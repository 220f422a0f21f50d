/**
 * @module Which language a request is answered in. Pages: `?lang=` (which also sets the
 * `gatehouse_lang` cookie), then that cookie, then Accept-Language, then DEFAULT_LANGUAGE. The API
 * routes that create accounts or sign in read only the cookie and Accept-Language, to remember
 * the account's language; they never answer in it (API messages stay English, codes are the contract).
 */
import { isSupportedLanguage, type Language } from './languages.js';

export const LANGUAGE_COOKIE = 'gatehouse_lang';

/** A year: a choice made once should hold across visits. */
const LANGUAGE_COOKIE_MAX_AGE_SECONDS = 365 * 24 * 3600;

/** What a request says about its language, each part as received (undefined: absent). */
export interface LanguageSignals {
  query?: string | undefined;
  cookie?: string | undefined;
  acceptLanguage?: string | undefined;
}

/**
 * The best supported language of an Accept-Language header: by q-value (ties keep the header's
 * order), a region dropped (`de-CH` → `de`), `*` and q=0 ignored. null: none usable.
 */
export function languageFromAcceptLanguage(header: string | undefined): Language | null {
  if (header === undefined || header.length > 1000) return null;
  const ranges = header
    .split(',')
    .map((part, index) => {
      const [tag = '', ...params] = part.trim().split(';');
      const q = params.map((p) => /^\s*q=([0-9.]+)\s*$/i.exec(p)).find((m) => m !== null);
      const weight = q ? Number(q[1]) : 1;
      return { primary: tag.trim().toLowerCase().split('-')[0] ?? '', weight: Number.isFinite(weight) ? weight : 0, index };
    })
    .filter((range) => range.weight > 0 && isSupportedLanguage(range.primary))
    .sort((a, b) => b.weight - a.weight || a.index - b.index);
  const best = ranges[0]?.primary;
  return isSupportedLanguage(best) ? best : null;
}

/** The page's language, and whether `?lang=` chose it (the caller then sets the cookie). */
export function negotiatePageLanguage(signals: LanguageSignals, defaultLanguage: Language): { lang: Language; fromQuery: boolean } {
  if (isSupportedLanguage(signals.query)) return { lang: signals.query, fromQuery: true };
  if (isSupportedLanguage(signals.cookie)) return { lang: signals.cookie, fromQuery: false };
  return { lang: languageFromAcceptLanguage(signals.acceptLanguage) ?? defaultLanguage, fromQuery: false };
}

/** The language an API request from our pages carries (cookie, then Accept-Language); null: none. */
export function requestLanguage(signals: Omit<LanguageSignals, 'query'>): Language | null {
  if (isSupportedLanguage(signals.cookie)) return signals.cookie;
  return languageFromAcceptLanguage(signals.acceptLanguage);
}

/** The Set-Cookie value remembering a chosen language. HttpOnly: only the server reads it. */
export function languageCookie(lang: Language, secure: boolean): string {
  return `${LANGUAGE_COOKIE}=${lang}; Path=/; Max-Age=${LANGUAGE_COOKIE_MAX_AGE_SECONDS}; SameSite=Lax; HttpOnly${secure ? '; Secure' : ''}`;
}
