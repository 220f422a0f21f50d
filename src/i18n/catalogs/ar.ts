/**
 * @module The Arabic catalog. Its translation is being written: until then it is empty and
 * i18next shows the English text for every key (test/i18n.test.ts lists it in CATALOGS_IN_PROGRESS).
 */
export const ar: Readonly<Record<string, string>> = {};
