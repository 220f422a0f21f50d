/**
 * @module The French catalog. Its translation is being written: until then it is empty and
 * i18next shows the English text for every key (test/i18n.test.ts lists it in CATALOGS_IN_PROGRESS).
 */
export const fr: Readonly<Record<string, string>> = {};
