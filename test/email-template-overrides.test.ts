/**
 * Email template overrides wired in: EMAIL_TEMPLATES_DIR is read while the configuration loads,
 * every email render asks it first (subject, text and HTML apart), in the recipient account's
 * language only, and a template that names a placeholder its kind does not offer stops the start
 * (loadConfig and createGatehouse), naming the file and the placeholder.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { ConfigError, loadConfig } from '../src/config.js';
import { renderEmailSignInEmail, renderVerificationEmail } from '../src/outbox/templates.js';
import { createTestGatehouse, describeEachDialect, STRONG_PASSWORD, TEST_JWT_SECRET, type TestGatehouse } from './support/harness.js';

const GERMAN = {
  'email_verification.de.subject.txt': 'Willkommen bei {{appName}}: bitte bestätigen\n',
  'email_verification.de.txt': 'Hallo!\n\nBestätige dein Konto bei {{appName}}: {{url}}\nDer Link gilt {{lifetime}}.\n',
  'email_verification.de.html': '<!doctype html><html lang="de"><body><p>{{appName}}</p><a href="{{url}}">Bestätigen</a> ({{lifetime}})</body></html>\n',
  // Only the subject of the French sign-in email: its text and HTML stay the built-in ones.
  'email_sign_in.fr.subject.txt': 'Votre code {{appName}}\n',
};

let dir: string;
let badDir: string;

beforeAll(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gatehouse-templates-wired-'));
  for (const [name, content] of Object.entries(GERMAN)) fs.writeFileSync(path.join(dir, name), content);
  badDir = fs.mkdtempSync(path.join(os.tmpdir(), 'gatehouse-templates-bad-'));
  fs.writeFileSync(path.join(badDir, 'email_verification.de.txt'), 'Hallo {{appName}}, {{link}}\n');
});

afterAll(() => {
  fs.rmSync(dir, { recursive: true, force: true });
  fs.rmSync(badDir, { recursive: true, force: true });
});

const configWith = (templatesDir: string) => loadConfig({ JWT_SECRET: TEST_JWT_SECRET, EMAIL_TEMPLATES_DIR: templatesDir });

describe('rendering with the overrides of the configuration', () => {
  test('the German override for a German account; each value escaped in the HTML and as it is in the text', () => {
    const { emailTemplates } = configWith(dir);
    expect(emailTemplates?.count).toBe(4);
    const options = { appName: '<script>alert(1)</script>', url: 'https://acme.example/verify-email?token=a&b', lifetimeHours: 24, emailTemplates };
    const german = renderVerificationEmail({ ...options, language: 'de' });
    expect(german.subject).toBe('Willkommen bei <script>alert(1)</script>: bitte bestätigen');
    expect(german.text).toBe(
      'Hallo!\n\nBestätige dein Konto bei <script>alert(1)</script>: https://acme.example/verify-email?token=a&b\nDer Link gilt 24 Stunden.\n',
    );
    expect(german.html).toBe(
      '<!doctype html><html lang="de"><body><p>&lt;script&gt;alert(1)&lt;/script&gt;</p><a href="https://acme.example/verify-email?token=a&amp;b">Bestätigen</a> (24 Stunden)</body></html>\n',
    );
    expect(german.html).not.toContain('<script>');
    // Any other language: the built-in email, as without the folder.
    for (const language of ['en', 'fr', null] as const) {
      const email = renderVerificationEmail({ ...options, language });
      expect(email).toEqual(renderVerificationEmail({ ...options, language, emailTemplates: null }));
      expect(email.subject).not.toContain('Willkommen');
    }
  });

  test('the parts are independent: an overridden subject leaves the built-in text and HTML; the code is offered', () => {
    const { emailTemplates } = configWith(dir);
    const options = { appName: 'Acme', url: 'https://acme.example/s', code: '123456', lifetimeMinutes: 15, language: 'fr' as const };
    const overridden = renderEmailSignInEmail({ ...options, emailTemplates });
    const builtIn = renderEmailSignInEmail(options);
    expect(overridden.subject).toBe('Votre code Acme');
    expect(builtIn.subject).not.toBe('Votre code Acme');
    expect(overridden.text).toBe(builtIn.text);
    expect(overridden.html).toBe(builtIn.html.replace(`<title>${builtIn.subject}</title>`, '<title>Votre code Acme</title>'));
  });

  test('an unknown placeholder stops loadConfig, naming the file and the placeholder', () => {
    let problems: string[] = [];
    try {
      configWith(badDir);
    } catch (error) {
      if (!(error instanceof ConfigError)) throw error;
      problems = error.problems;
    }
    expect(problems).toHaveLength(1);
    expect(problems[0]).toContain(`EMAIL_TEMPLATES_DIR: ${path.join(badDir, 'email_verification.de.txt')}: unknown placeholder {{link}}`);
    expect(problems[0]).toContain('{{appName}}, {{url}}, {{lifetime}}');
  });
});

describeEachDialect('overrides in the emails Gatehouse queues', (dialect) => {
  let t: TestGatehouse;
  beforeAll(async () => {
    t = await createTestGatehouse(dialect, { env: { EMAIL_TEMPLATES_DIR: dir, APP_NAME: 'Acme' } });
  });
  afterAll(async () => {
    await t?.close();
  });

  test('an account registered from a German page gets the German override, filled; another account the English built-in', async () => {
    for (const [email, cookie] of [
      ['de@example.com', 'gatehouse_lang=de'],
      ['en@example.com', undefined],
    ] as const) {
      const response = await t.request('POST', '/api/auth/register', { json: { email, password: STRONG_PASSWORD }, ...(cookie ? { cookie } : {}) });
      expect(response.status).toBe(201);
    }
    await t.gatehouse.deliverQueuedEmails();
    const to = (address: string) => t.sentEmails.find((email) => email.to === address)!;
    const german = to('de@example.com');
    expect(german.subject).toBe('Willkommen bei Acme: bitte bestätigen');
    const url = /Bestätige dein Konto bei Acme: (\S+)\n/.exec(german.text)?.[1];
    expect(url).toMatch(new RegExp(`^${t.gatehouse.config.baseUrl}/verify-email\\?token=[A-Za-z0-9_.-]+$`));
    expect(german.html).toContain(`<a href="${url}">Bestätigen</a> (24 Stunden)`);
    const english = to('en@example.com');
    const builtIn = renderVerificationEmail({ appName: 'Acme', url: 'x', lifetimeHours: 24 });
    expect(english.subject).toBe(builtIn.subject);
    expect(english.text.startsWith(builtIn.text.split('\n')[0]!)).toBe(true);
    expect(english.html).toContain('<html lang="en" dir="ltr">');
  });

  test('an unknown placeholder stops createGatehouse, naming the file and the placeholder', async () => {
    await expect(createTestGatehouse(dialect, { env: { EMAIL_TEMPLATES_DIR: badDir } })).rejects.toThrow(
      `EMAIL_TEMPLATES_DIR: ${path.join(badDir, 'email_verification.de.txt')}: unknown placeholder {{link}}`,
    );
  });
});
