/**
 * @module Catalog lookups: one i18next instance (created here, never the library's global) over
 * the catalogs in ./catalogs, and `translator(lang)` giving the `t(key, vars)` pages and emails use.
 *
 * Keys are flat (`login.title`): the key separator is off, so a dot is part of the key. Plurals
 * use i18next's suffixes (`_one`, `_other`, … by CLDR rules through Intl.PluralRules), chosen by
 * the `count` variable. Interpolation is `{{name}}` and does NOT escape: pages put the result
 * through the escaping `html` template, emails escape their HTML part themselves, so escaping here
 * as well would show `&amp;` to the reader.
 */
import i18next, { type i18n } from 'i18next';
import { CATALOGS } from './catalogs/index.js';
import { SUPPORTED_LANGUAGES, type Language } from './languages.js';

/** Values a message interpolates; `count` also picks the plural form. */
export type MessageVars = Readonly<Record<string, string | number>>;

export type Translate = (key: string, vars?: MessageVars) => string;

function createI18n(): i18n {
  const instance = i18next.createInstance();
  void instance.init({
    // Synchronous: the resources are in memory, so `t` works as soon as this returns.
    initAsync: false,
    resources: Object.fromEntries(SUPPORTED_LANGUAGES.map((lang) => [lang, { translation: CATALOGS[lang] }])),
    supportedLngs: [...SUPPORTED_LANGUAGES],
    lng: 'en',
    // A key missing from a catalog being translated shows the English text, never the key.
    fallbackLng: 'en',
    keySeparator: false,
    nsSeparator: false,
    returnNull: false,
    returnEmptyString: false,
    interpolation: { escapeValue: false },
  });
  return instance;
}

const instance = createI18n();
const fixed = new Map<Language, Translate>();

/** The lookup function of one language; the same function for every call with that language. */
export function translator(lang: Language): Translate {
  let t = fixed.get(lang);
  if (t === undefined) {
    const fixedT = instance.getFixedT(lang);
    t = (key, vars) => fixedT(key, vars ?? {});
    fixed.set(lang, t);
  }
  return t;
}

/** Whether the language's own catalog (not the English fallback) has the key. */
export function hasOwnMessage(lang: Language, key: string): boolean {
  return Object.hasOwn(CATALOGS[lang], key);
}
