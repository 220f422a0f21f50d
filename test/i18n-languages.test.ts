/**
 * @module The German, French and Spanish pages over HTTP: each page, asked for with `?lang=`, is
 * in that language from `<html lang dir>` to the scripts' messages, and no catalog key shows
 * through where its text should be.
 */
import { afterEach, beforeEach, expect, test } from 'vitest';
import { CATALOGS } from '../src/i18n/catalogs/index.js';
import type { Language } from '../src/i18n/languages.js';
import { createTestGatehouse, describeEachDialect, type TestGatehouse } from './support/harness.js';

/** Each page's title, written out here rather than read from the catalog, so a wrong catalog entry fails. */
const TITLES: Readonly<Record<'de' | 'fr' | 'es', Readonly<Record<string, string>>>> = {
  de: { '/login': 'Anmelden', '/register': 'Registrieren', '/forgot-password': 'Passwort zurücksetzen' },
  fr: { '/login': 'Se connecter', '/register': 'Créer un compte', '/forgot-password': 'Réinitialiser votre mot de passe' },
  es: { '/login': 'Iniciar sesión', '/register': 'Crear una cuenta', '/forgot-password': 'Restablecer la contraseña' },
};

const ENGLISH_TITLES: Readonly<Record<string, string>> = { '/login': 'Sign in', '/register': 'Create an account', '/forgot-password': 'Reset your password' };

/** The scripts' messages travel as JSON keyed by catalog key: they are taken out before looking for raw keys. */
const MESSAGES_BLOCK = /<script type="application\/json" id="page-messages">(.*?)<\/script>/s;

/** `login.title`, `error.not_found`, `email.signIn.subject`: a catalog key's shape, with any of the catalog's prefixes. */
const RAW_KEY = new RegExp(`\\b(?:${[...new Set(Object.keys(CATALOGS.en).map((key) => key.split('.')[0]))].join('|')})\\.[a-zA-Z_]+(?:\\.[a-zA-Z_]+)*\\b`);

describeEachDialect('German, French and Spanish pages', (dialect) => {
  let t: TestGatehouse;
  beforeEach(async () => {
    t = await createTestGatehouse(dialect, { env: { APP_NAME: 'Acme Login' } });
  });
  afterEach(async () => {
    await t.close();
  });

  async function expectPageIn(lang: 'de' | 'fr' | 'es'): Promise<void> {
    for (const [pagePath, title] of Object.entries(TITLES[lang])) {
      const page = await (await t.request('GET', `${pagePath}?lang=${lang}`)).text();
      expect(page).toMatch(new RegExp(`^<!doctype html>\\n<html lang="${lang}" dir="ltr">`));
      expect(page).toContain(`<title>${title} · Acme Login</title>`);
      expect(page).toContain(`<h1>${title}</h1>`);
      expect(page).not.toContain(`>${ENGLISH_TITLES[pagePath]}<`);
      const messages = MESSAGES_BLOCK.exec(page)?.[1];
      if (messages !== undefined) {
        const parsed = JSON.parse(messages) as Record<string, string>;
        for (const [key, text] of Object.entries(parsed)) expect({ key, text }).toEqual({ key, text: CATALOGS[lang as Language][key] });
      }
      expect({ pagePath, rawKey: RAW_KEY.exec(page.replace(MESSAGES_BLOCK, ''))?.[0] }).toEqual({ pagePath, rawKey: undefined });
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
