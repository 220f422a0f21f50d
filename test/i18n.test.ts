/**
 * The catalogs against the code and against each other, and the language of pages over HTTP.
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, test } from 'vitest';
import { ERROR_CODES } from '../src/errors.js';
import { CATALOGS } from '../src/i18n/catalogs/index.js';
import { SUPPORTED_LANGUAGES, type Language } from '../src/i18n/languages.js';
import { languageFromAcceptLanguage, negotiatePageLanguage } from '../src/i18n/negotiate.js';
import { translator } from '../src/i18n/translator.js';

/**
 * Catalogs whose translation is still being written: completeness is not asserted for them.
 * Translators remove their language when its catalog is complete; the last test fails if a
 * language stays here with a complete catalog, so the list cannot go stale.
 */
const CATALOGS_IN_PROGRESS: readonly Language[] = ['de', 'fr', 'es', 'ja', 'ar'];

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

  test('lookups interpolate without escaping, pick plurals, and fall back to English', () => {
    const t = translator('en');
    expect(t('login.provider', { provider: 'A & <B>' })).toBe('Sign in with A & <B>');
    expect(translator('de')('login.provider', { provider: 'GitHub' })).toBe('Sign in with GitHub');
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
