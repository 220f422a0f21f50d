/**
 * @module The German catalog. Its translation is being written: until then it is empty and
 * i18next shows the English text for every key (test/i18n.test.ts lists it in CATALOGS_IN_PROGRESS).
 */
export const de: Readonly<Record<string, string>> = {};
