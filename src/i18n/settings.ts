/** @module The language settings: the language of pages and emails when nothing else chooses one. */
import { defineSettings } from '../settings.js';
import { isSupportedLanguage, SUPPORTED_LANGUAGES, type Language } from './languages.js';

export interface I18nSettings {
  /** Pages with no ?lang=, cookie or usable Accept-Language, and emails to accounts with no language. */
  defaultLanguage: Language;
}

export const i18nSettings = defineSettings({
  name: 'i18n',
  variables: [
    {
      name: 'DEFAULT_LANGUAGE',
      default: 'en',
      meaning: `language of pages and emails when the person has chosen none (${SUPPORTED_LANGUAGES.join(', ')})`,
    },
  ],
  read: (reader): I18nSettings => {
    const raw = reader.read('DEFAULT_LANGUAGE') ?? 'en';
    if (!isSupportedLanguage(raw)) {
      reader.problem(`DEFAULT_LANGUAGE: expected one of ${SUPPORTED_LANGUAGES.join(', ')}, got "${raw}"`);
      return { defaultLanguage: 'en' };
    }
    return { defaultLanguage: raw };
  },
});
