/**
 * @module The languages pages and emails are offered in. A plain module with no imports, so the
 * settings module, the catalogs' test and the page routes all read the one list.
 */

export const SUPPORTED_LANGUAGES = ['en', 'de', 'fr', 'es', 'ja', 'ar'] as const;

export type Language = (typeof SUPPORTED_LANGUAGES)[number];

/** Written right to left: the page gets `dir="rtl"`. */
export const RTL: readonly Language[] = ['ar'];

/** Each language's name in itself, as the language switcher shows it (a reader finds their own). */
export const LANGUAGE_NAMES: Readonly<Record<Language, string>> = {
  en: 'English',
  de: 'Deutsch',
  fr: 'Français',
  es: 'Español',
  ja: '日本語',
  ar: 'العربية',
};

export function isSupportedLanguage(value: unknown): value is Language {
  return typeof value === 'string' && (SUPPORTED_LANGUAGES as readonly string[]).includes(value);
}

export function directionOf(lang: Language): 'ltr' | 'rtl' {
  return RTL.includes(lang) ? 'rtl' : 'ltr';
}
