/**
 * @module The German, French and Spanish pages over HTTP, signed out and signed in: each page,
 * asked for with `?lang=`, is in that language from `<html lang dir>` to the scripts' messages,
 * with no English sentence left and no catalog key showing through where its text should be.
 */
import { afterEach, beforeEach, expect, test } from 'vitest';
import { CATALOGS } from '../src/i18n/catalogs/index.js';
import type { Language } from '../src/i18n/languages.js';
import { STRONG_PASSWORD, cookieFrom, createTestGatehouse, describeEachDialect, type TestGatehouse } from './support/harness.js';

/** Each page's title, written out here rather than read from the catalog, so a wrong catalog entry fails. */
const TITLES: Readonly<Record<'de' | 'fr' | 'es', Readonly<Record<string, string>>>> = {
  de: {
    '/login': 'Anmelden',
    '/register': 'Registrieren',
    '/forgot-password': 'Passwort zurücksetzen',
    '/reset-password': 'Neues Passwort festlegen',
    '/dashboard': 'Ihr Konto',
    '/account': 'Konto verwalten',
  },
  fr: {
    '/login': 'Se connecter',
    '/register': 'Créer un compte',
    '/forgot-password': 'Réinitialiser votre mot de passe',
    '/reset-password': 'Choisissez un nouveau mot de passe',
    '/dashboard': 'Votre compte',
    '/account': 'Gérer votre compte',
  },
  es: {
    '/login': 'Iniciar sesión',
    '/register': 'Crear una cuenta',
    '/forgot-password': 'Restablecer la contraseña',
    '/reset-password': 'Elige una contraseña nueva',
    '/dashboard': 'Tu cuenta',
    '/account': 'Gestionar tu cuenta',
  },
};

const ENGLISH_TITLES: Readonly<Record<string, string>> = {
  '/login': 'Sign in',
  '/register': 'Create an account',
  '/forgot-password': 'Reset your password',
  '/reset-password': 'Choose a new password',
  '/dashboard': 'Your account',
  '/account': 'Manage your account',
};

/** The scripts' messages travel as JSON keyed by catalog key: they are taken out before looking for raw keys. */
const MESSAGES_BLOCK = /<script type="application\/json" id="page-messages">(.*?)<\/script>/s;

const PLURAL = /_(zero|one|two|few|many|other)$/;

/** The text a reader sees: no tags, no scripts. */
function visibleText(page: string): string {
  return page
    .replace(/<script[^>]*>.*?<\/script>/gs, ' ')
    .replace(/<[^>]+>/g, ' ')
    .replace(/&amp;/g, '&');
}

/** Whether `text` holds `words` as whole words ("Continuer" does not hold "Continue"). */
function containsWords(text: string, words: string): boolean {
  return new RegExp(`(?<!\\p{L})${words.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}(?!\\p{L})`, 'u').test(text);
}

/** English messages long enough not to occur by chance, without placeholders, that the language does not happen to share. */
function englishSentences(lang: Language): string[] {
  const own = new Set(Object.values(CATALOGS[lang]));
  return Object.values(CATALOGS.en).filter((text) => text.length >= 8 && !text.includes('{{') && !own.has(text));
}

/** `login.title`, `error.not_found`, `email.signIn.subject`: a catalog key's shape, with any of the catalog's prefixes. */
const RAW_KEY = new RegExp(`\\b(?:${[...new Set(Object.keys(CATALOGS.en).map((key) => key.split('.')[0]))].join('|')})\\.[a-zA-Z_]+(?:\\.[a-zA-Z_]+)*\\b`);

describeEachDialect('German, French and Spanish pages', (dialect) => {
  let t: TestGatehouse;
  /** A signed-in session, for /dashboard and /account. */
  let cookie: string;
  beforeEach(async () => {
    t = await createTestGatehouse(dialect, { env: { APP_NAME: 'Acme Login' } });
    const registered = await t.request('POST', '/api/auth/register', { json: { email: 'page@example.com', password: STRONG_PASSWORD } });
    cookie = cookieFrom(registered, 'gatehouse_session')!;
  });
  afterEach(async () => {
    await t.close();
  });

  async function expectPageIn(lang: 'de' | 'fr' | 'es'): Promise<void> {
    for (const [pagePath, title] of Object.entries(TITLES[lang])) {
      const response = await t.request('GET', `${pagePath}?lang=${lang}`, { cookie });
      expect({ pagePath, status: response.status }).toEqual({ pagePath, status: 200 });
      const page = await response.text();
      expect(page).toMatch(new RegExp(`^<!doctype html>\\n<html lang="${lang}" dir="ltr">`));
      expect(page).toContain(`<title>${title} · Acme Login</title>`);
      expect(page).toContain(`<h1>${title}</h1>`);
      expect(page).not.toContain(`>${ENGLISH_TITLES[pagePath]}<`);
      const text = visibleText(page);
      expect({ pagePath, rawKey: RAW_KEY.exec(text)?.[0] }).toEqual({ pagePath, rawKey: undefined });
      expect({ pagePath, english: englishSentences(lang).filter((sentence) => containsWords(text, sentence)) }).toEqual({ pagePath, english: [] });
      // Every message a script can pick is the language's own, a counted one in each of the
      // language's plural forms (app.js picks `key_<form>` by Intl.PluralRules).
      const messages = JSON.parse(MESSAGES_BLOCK.exec(page)?.[1] ?? '{}') as Record<string, string>;
      const catalog: Readonly<Record<string, string>> = CATALOGS[lang];
      const forms = new Intl.PluralRules(lang).resolvedOptions().pluralCategories;
      const picked = [...new Set(Object.keys(messages).flatMap((key) => (PLURAL.test(key) ? forms.map((form) => key.replace(PLURAL, `_${form}`)) : [key])))];
      const notOwn = picked.filter((key) => !Object.hasOwn(catalog, key) || messages[key] !== catalog[key]);
      expect({ pagePath, notOwn }).toEqual({ pagePath, notOwn: [] });
    }
  }

  test('?lang=de: German pages', async () => {
    await expectPageIn('de');
  });

  test('?lang=fr: French pages', async () => {
    await expectPageIn('fr');
  });

  test('?lang=es: Spanish pages', async () => {
    await expectPageIn('es');
  });
});
