/**
 * The catalogs against the code and against each other, and the language of pages over HTTP.
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, test } from 'vitest';
import { ERROR_CODES } from '../src/errors.js';
import { CATALOGS } from '../src/i18n/catalogs/index.js';
import { SUPPORTED_LANGUAGES, type Language } from '../src/i18n/languages.js';
import { languageFromAcceptLanguage, negotiatePageLanguage } from '../src/i18n/negotiate.js';
import { translator } from '../src/i18n/translator.js';
import { STRONG_PASSWORD, createTestGatehouse, describeEachDialect, type TestGatehouse } from './support/harness.js';

/**
 * Catalogs whose translation is still being written: completeness is not asserted for them.
 * Translators remove their language when its catalog is complete; the last test fails if a
 * language stays here with a complete catalog, so the list cannot go stale.
 */
const CATALOGS_IN_PROGRESS: readonly Language[] = [];

/** Keys built at run time, which no literal `t('…')` names. */
const DYNAMIC_KEYS: readonly string[] = ERROR_CODES.map((code) => `error.${code}`);

const PLURAL_SUFFIX = /_(zero|one|two|few|many|other)$/;

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return entry.name === 'catalogs' ? [] : sourceFiles(full);
    return /\.(ts|js)$/.test(entry.name) ? [full] : [];
  });
}

/** Every key the code names: `t('…')`, `tHtml(t, '…')` in src/, `msg('…')` in the page scripts. */
function keysUsedInCode(): Set<string> {
  const keys = new Set<string>(DYNAMIC_KEYS);
  for (const file of sourceFiles(path.resolve('src'))) {
    const text = readFileSync(file, 'utf8');
    for (const match of text.matchAll(/\b(?:t|msg|tHtml\(\s*[\w.]+\s*,)\(?\s*'([a-zA-Z][\w]*\.[\w.]+)'/g)) keys.add(match[1] ?? '');
  }
  return keys;
}

/** A catalog's keys without their plural suffix, as the code names them. */
function baseKeys(catalog: Readonly<Record<string, string>>): Set<string> {
  return new Set(Object.keys(catalog).map((key) => key.replace(PLURAL_SUFFIX, '')));
}

describe('catalogs', () => {
  test('every key the code uses is in the English catalog', () => {
    const english = baseKeys(CATALOGS.en);
    expect([...keysUsedInCode()].filter((key) => !english.has(key))).toEqual([]);
  });

  test('every English key is used by the code', () => {
    const used = keysUsedInCode();
    expect([...baseKeys(CATALOGS.en)].filter((key) => !used.has(key))).toEqual([]);
  });

  test('no catalog has a key the English one does not have', () => {
    for (const lang of SUPPORTED_LANGUAGES) {
      const english = baseKeys(CATALOGS.en);
      expect({ lang, extra: [...baseKeys(CATALOGS[lang])].filter((key) => !english.has(key)) }).toEqual({ lang, extra: [] });
    }
  });

  /** The keys a complete catalog of `lang` has: each English key, a plural one in each of the language's forms. */
  function missingKeys(lang: Language): string[] {
    const categories = new Intl.PluralRules(lang).resolvedOptions().pluralCategories;
    const catalog = CATALOGS[lang];
    const plural = new Set(
      Object.keys(CATALOGS.en)
        .filter((key) => PLURAL_SUFFIX.test(key))
        .map((key) => key.replace(PLURAL_SUFFIX, '')),
    );
    return [...baseKeys(CATALOGS.en)].flatMap((key) =>
      plural.has(key) ? categories.map((form) => `${key}_${form}`).filter((full) => !(full in catalog)) : key in catalog ? [] : [key],
    );
  }

  test('every catalog not in progress is complete, plural forms by the language’s rules included', () => {
    for (const lang of SUPPORTED_LANGUAGES.filter((l) => !CATALOGS_IN_PROGRESS.includes(l))) {
      expect({ lang, missing: missingKeys(lang) }).toEqual({ lang, missing: [] });
    }
  });

  test('CATALOGS_IN_PROGRESS holds only languages whose catalog is incomplete', () => {
    for (const lang of CATALOGS_IN_PROGRESS) expect({ lang, incomplete: missingKeys(lang).length > 0 }).toEqual({ lang, incomplete: true });
  });

  test('lookups interpolate without escaping, pick plurals by the language’s rules', () => {
    const t = translator('en');
    expect(t('login.provider', { provider: 'A & <B>' })).toBe('Sign in with A & <B>');
    expect(translator('de')('login.provider', { provider: 'GitHub' })).toBe('Mit GitHub anmelden');
    // French counts 0 and 1 as singular (English says "0 hours"), and whole millions take "de".
    const fr = translator('fr');
    expect([0, 1, 2, 1_000_000].map((count) => fr('email.hours', { count }))).toEqual(['0 heure', '1 heure', '2 heures', '1000000 d’heures']);
  });
});

describe('negotiation', () => {
  test('Accept-Language: by q-value, regions dropped, unsupported and q=0 ignored', () => {
    expect(languageFromAcceptLanguage('de-CH, en;q=0.5')).toBe('de');
    expect(languageFromAcceptLanguage('en;q=0.4, fr-FR;q=0.9')).toBe('fr');
    expect(languageFromAcceptLanguage('xx, ja;q=0.1')).toBe('ja');
    expect(languageFromAcceptLanguage('de;q=0, *')).toBeNull();
    expect(languageFromAcceptLanguage(undefined)).toBeNull();
  });

  test('?lang= before the cookie before Accept-Language before the default; unsupported values ignored', () => {
    expect(negotiatePageLanguage({ query: 'ar', cookie: 'de', acceptLanguage: 'fr' }, 'en')).toEqual({ lang: 'ar', fromQuery: true });
    expect(negotiatePageLanguage({ query: 'xx', cookie: 'de', acceptLanguage: 'fr' }, 'en')).toEqual({ lang: 'de', fromQuery: false });
    expect(negotiatePageLanguage({ cookie: 'zz', acceptLanguage: 'fr' }, 'en')).toEqual({ lang: 'fr', fromQuery: false });
    expect(negotiatePageLanguage({}, 'es')).toEqual({ lang: 'es', fromQuery: false });
  });
});

describeEachDialect('page languages over HTTP', (dialect) => {
  let t: TestGatehouse;
  beforeEach(async () => {
    t = await createTestGatehouse(dialect, { env: { APP_NAME: 'Acme Login' } });
  });
  afterEach(async () => {
    await t.close();
  });

  test('?lang= chooses the language and sets the cookie; <html lang dir> follow it (Arabic: rtl)', async () => {
    const response = await t.request('GET', '/login?lang=ar&return_to=%2Fapp');
    const page = await response.text();
    expect(page).toMatch(/^<!doctype html>\n<html lang="ar" dir="rtl">/);
    const cookie = response.headers.get('set-cookie') ?? '';
    expect(cookie).toMatch(/^gatehouse_lang=ar; Path=\/; Max-Age=31536000; SameSite=Lax; HttpOnly$/);
    // The switcher keeps the path and the page's own query, and names each language in itself.
    expect(page).toContain('<nav class="language-switcher"');
    expect(page).toContain('href="/login?return_to=%2Fapp&amp;lang=de" lang="de" hreflang="de">Deutsch</a>');
    expect(page).toContain('>العربية</a>');
  });

  test('the cookie, then Accept-Language with q-values, then the default; unsupported values are ignored', async () => {
    const lang = async (path: string, headers: Record<string, string>): Promise<string | undefined> =>
      /<html lang="([a-z]+)"/.exec(await (await t.request('GET', path, { headers })).text())?.[1];
    expect(await lang('/register', { cookie: 'gatehouse_lang=ja' })).toBe('ja');
    expect(await lang('/register', { cookie: 'gatehouse_lang=xx', 'accept-language': 'en;q=0.3, de-CH;q=0.8' })).toBe('de');
    expect(await lang('/register?lang=xx', {})).toBe('en');
    const unsupported = await t.request('GET', '/register?lang=xx');
    expect(unsupported.headers.get('set-cookie')).toBeNull();
  });

  test('APP_NAME is in the header and the title of every page', async () => {
    const page = await (await t.request('GET', '/forgot-password')).text();
    expect(page).toContain('<span class="brand">Acme Login</span>');
    expect(page).toMatch(/<title>[^<]+ · Acme Login<\/title>/);
    expect(page).not.toContain('Gatehouse');
  });

  test('an account registered from a page keeps the page’s language; without one it stays null', async () => {
    const fromPage = await t.request('POST', '/api/auth/register', {
      json: { email: 'de@example.com', password: STRONG_PASSWORD },
      cookie: 'gatehouse_lang=de',
    });
    expect(fromPage.status).toBe(201);
    const byHeader = await t.request('POST', '/api/auth/register', {
      json: { email: 'fr@example.com', password: STRONG_PASSWORD },
      headers: { 'accept-language': 'fr-CA, en;q=0.5' },
    });
    expect(byHeader.status).toBe(201);
    const none = await t.request('POST', '/api/auth/register', { json: { email: 'none@example.com', password: STRONG_PASSWORD } });
    expect(none.status).toBe(201);
    const rows = await t.database.kysely.selectFrom('users').select(['email', 'language']).orderBy('email').execute();
    expect(rows).toEqual([
      { email: 'de@example.com', language: 'de' },
      { email: 'fr@example.com', language: 'fr' },
      { email: 'none@example.com', language: null },
    ]);
  });
});
