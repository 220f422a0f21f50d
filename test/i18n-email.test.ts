/**
 * Emails in the recipient account's language: the account's language reaches the renderer
 * (the email's `<html lang dir>`), DEFAULT_LANGUAGE stands in for an account without one, and
 * the English text stays the product's words with APP_NAME in them.
 */
import { afterEach, describe, expect, test } from 'vitest';
import { scriptMessagesBlock } from '../src/web/html.js';
import { EMAIL_KINDS, renderAccountLockedEmail, renderEmailSignInEmail, renderVerificationEmail } from '../src/outbox/templates.js';
import { STRONG_PASSWORD, cookieFrom, createTestGatehouse, describeEachDialect, type TestGatehouse } from './support/harness.js';

describe('the scripts’ messages block', () => {
  test('is JSON in a data block that no string can close, and parses back to the same texts', () => {
    const block = scriptMessagesBlock({ 'script.x': '</script><script>alert(1)</script> & \u2028' }).value;
    expect(block.startsWith('<script type="application/json" id="page-messages">')).toBe(true);
    expect(block.match(/<\/script>/g)).toHaveLength(1);
    const json = block.slice(block.indexOf('>') + 1, block.lastIndexOf('</script>'));
    expect(JSON.parse(json)).toEqual({ 'script.x': '</script><script>alert(1)</script> & \u2028' });
  });
});

describe('email rendering', () => {
  test('the language chosen: the account’s, else the default, else English; the HTML says which', () => {
    const base = { appName: 'Acme', url: 'https://acme.example/verify-email?token=a&b', lifetimeHours: 24 };
    expect(renderVerificationEmail({ ...base, language: 'ar', defaultLanguage: 'de' }).language).toBe('ar');
    expect(renderVerificationEmail({ ...base, language: null, defaultLanguage: 'fr' }).language).toBe('fr');
    const english = renderVerificationEmail(base);
    expect(english.language).toBe('en');
    expect(english.html).toMatch(/^<!doctype html>\n<html lang="en" dir="ltr">/);
    expect(renderVerificationEmail({ ...base, language: 'ar' }).html).toContain('<html lang="ar" dir="rtl">');
    expect(english.subject).toBe('Confirm your email address for Acme');
    expect(english.text).toContain('The link works once and expires in 24 hours.');
    // Escaped once in the HTML, never in the text.
    expect(english.html).toContain('token=a&amp;b');
    expect(english.html).not.toContain('&amp;amp;');
    expect(english.text).toContain('token=a&b');
  });

  test('plural forms by count; the code never in the subject', () => {
    const one = renderEmailSignInEmail({ appName: 'Acme', url: 'https://acme.example/x', code: '123456', lifetimeMinutes: 1 });
    expect(one.text).toContain('expire in 1 minute,');
    expect(one.subject).not.toContain('123456');
    const locked = renderAccountLockedEmail({ appName: 'Acme', baseUrl: 'https://acme.example', failures: 5, lockedForMinutes: 15 });
    expect(locked.text).toContain(
      'After 5 failed sign-in attempts with a wrong password, sign-in with a password to your Acme account is paused for 15 minutes.',
    );
  });

  test('EMAIL_KINDS names each kind’s variables, appName and url in all', () => {
    for (const variables of Object.values(EMAIL_KINDS)) expect(variables).toEqual(expect.arrayContaining(['appName', 'url']));
  });
});

describeEachDialect('emails in the account’s language', (dialect) => {
  let t: TestGatehouse | undefined;
  afterEach(async () => {
    await t?.close();
  });

  test('the verification email of an account registered from an Arabic page is written in Arabic; without a language, DEFAULT_LANGUAGE', async () => {
    t = await createTestGatehouse(dialect, { env: { DEFAULT_LANGUAGE: 'ja' } });
    const fromPage = await t.request('POST', '/api/auth/register', {
      json: { email: 'ar@example.com', password: STRONG_PASSWORD },
      cookie: 'gatehouse_lang=ar',
    });
    expect(fromPage.status).toBe(201);
    const plain = await t.request('POST', '/api/auth/register', { json: { email: 'plain@example.com', password: STRONG_PASSWORD } });
    expect(plain.status).toBe(201);
    await t.gatehouse.deliverQueuedEmails();
    const htmlTo = (to: string): string => t!.sentEmails.find((email) => email.to === to)?.html ?? '';
    expect(htmlTo('ar@example.com')).toContain('<html lang="ar" dir="rtl">');
    expect(htmlTo('plain@example.com')).toContain('<html lang="ja" dir="ltr">');
    const row = await t.database.kysely.selectFrom('users').select('language').where('email', '=', 'plain@example.com').executeTakeFirstOrThrow();
    expect(row.language).toBeNull();
  });

  test('a signed-in page in another language, and a sign-in from a page, update the account’s language; the session check writes nothing', async () => {
    t = await createTestGatehouse(dialect);
    const registered = await t.request('POST', '/api/auth/register', { json: { email: 'moves@example.com', password: STRONG_PASSWORD } });
    const cookie = cookieFrom(registered, 'gatehouse_session')!;
    const language = async (): Promise<string | null> =>
      (await t!.database.kysely.selectFrom('users').select('language').where('email', '=', 'moves@example.com').executeTakeFirstOrThrow()).language;
    expect(await language()).toBeNull();
    // The default language alone is no choice: nothing is written.
    expect((await t.request('GET', '/account', { cookie })).status).toBe(200);
    expect(await language()).toBeNull();
    expect((await t.request('GET', '/account?lang=es', { cookie })).status).toBe(200);
    expect(await language()).toBe('es');
    expect((await t.request('GET', '/dashboard', { cookie: `${cookie}; gatehouse_lang=fr` })).status).toBe(200);
    expect(await language()).toBe('fr');
    // The hot path reads the cookie's language but never stores it.
    expect((await t.request('GET', '/api/auth/session', { cookie: `${cookie}; gatehouse_lang=ja` })).status).toBe(200);
    expect(await language()).toBe('fr');
    const login = await t.request('POST', '/api/auth/login', { json: { email: 'moves@example.com', password: STRONG_PASSWORD }, cookie: 'gatehouse_lang=de' });
    expect(login.status).toBe(200);
    expect(await language()).toBe('de');
  });
});
