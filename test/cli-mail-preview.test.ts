/**
 * `gatehouse mail preview` run as the built command (dist/cli.js: `npm run build` first): the
 * kinds as `gatehouse outbox` names them, one email with sample values in a language, overrides
 * from EMAIL_TEMPLATES_DIR applied, in production with no SMTP server and a database that cannot
 * be reached (nothing is opened); bad arguments exit 2 naming what is known.
 */
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { EMAIL_KINDS } from '../src/outbox/templates.js';
import { TEST_JWT_SECRET } from './support/harness.js';

const CLI = path.resolve('dist/cli.js');

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

let dir: string;
let badDir: string;

/** Production, no SMTP_URL, and a DATABASE_URL nothing listens on: a preview needs neither. */
const baseEnv = (): Record<string, string> => ({
  PATH: process.env.PATH ?? '',
  NODE_ENV: 'production',
  JWT_SECRET: TEST_JWT_SECRET,
  BASE_URL: 'https://auth.acme.example',
  DATABASE_URL: 'postgres://nobody@127.0.0.1:1/none',
  METRICS_PUBLIC: 'true',
  APP_NAME: 'Acme',
  EMAIL_TEMPLATES_DIR: dir,
});

const run = (args: string[], env: Record<string, string> = baseEnv()): Promise<Run> =>
  new Promise((resolve) => {
    execFile(process.execPath, [CLI, ...args], { env, cwd: dir, timeout: 30_000 }, (error, stdout, stderr) => {
      resolve({ code: error === null ? 0 : typeof error.code === 'number' ? error.code : 1, stdout, stderr });
    });
  });

beforeAll(() => {
  if (!fs.existsSync(CLI)) throw new Error('dist/cli.js is missing: run npm run build first');
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gatehouse-mail-preview-'));
  fs.writeFileSync(path.join(dir, 'email_verification.de.subject.txt'), 'Willkommen bei {{appName}}\n');
  fs.writeFileSync(path.join(dir, 'email_verification.de.txt'), 'Bitte bestätigen: {{url}} ({{lifetime}})\n');
  fs.writeFileSync(path.join(dir, 'email_verification.de.html'), '<p><a href="{{url}}">{{appName}}</a></p>\n');
  badDir = fs.mkdtempSync(path.join(os.tmpdir(), 'gatehouse-mail-preview-bad-'));
  fs.writeFileSync(path.join(badDir, 'password_reset.en.txt'), '{{appName}}: {{token}}\n');
});

afterAll(() => {
  fs.rmSync(dir, { recursive: true, force: true });
  fs.rmSync(badDir, { recursive: true, force: true });
});

describe('gatehouse mail preview', { timeout: 60_000 }, () => {
  test('--list: every kind, as gatehouse outbox names them, with its placeholders', async () => {
    const listed = await run(['mail', 'preview', '--list']);
    expect(listed).toMatchObject({ code: 0, stderr: '' });
    const lines = listed.stdout.trimEnd().split('\n');
    expect(lines.map((line) => line.split(/\s+/)[0])).toEqual(Object.keys(EMAIL_KINDS));
    expect(lines).toContain('email_sign_in  {{appName}} {{url}} {{code}} {{lifetime}}');
  });

  test('one email: the subject line, then the text with a sample link on BASE_URL and a sample code', async () => {
    const signIn = await run(['mail', 'preview', 'email_sign_in']);
    expect(signIn.code).toBe(0);
    const [subject, blank, ...body] = signIn.stdout.split('\n');
    expect(subject).toBe('Subject: Sign in to Acme');
    expect(blank).toBe('');
    expect(body.join('\n')).toMatch(/^https:\/\/auth\.acme\.example\/email-sign-in\?token=\S+$/m);
    expect(body.join('\n')).toContain('123456');
    const french = await run(['mail', 'preview', 'email_sign_in', '--lang', 'fr', '--html']);
    expect(french.code).toBe(0);
    expect(french.stdout).toMatch(/^Subject: .+\n\n<!doctype html>\n<html lang="fr" dir="ltr">/);
  });

  test('the overrides applied: German from the folder, filled and escaped; English still the built-in', async () => {
    const german = await run(['mail', 'preview', 'email_verification', '--lang', 'de']);
    expect(german).toMatchObject({ code: 0, stderr: '' });
    expect(german.stdout).toMatch(
      /^Subject: Willkommen bei Acme\n\nBitte bestätigen: https:\/\/auth\.acme\.example\/verify-email\?token=\S+ \(24 Stunden\)\n$/,
    );
    const html = await run(['mail', 'preview', 'email_verification', '--lang', 'de', '--html']);
    expect(html.stdout).toMatch(/^Subject: Willkommen bei Acme\n\n<p><a href="https:\/\/auth\.acme\.example\/verify-email\?token=[^"]+">Acme<\/a><\/p>\n$/);
    const english = await run(['mail', 'preview', 'email_verification', '--lang', 'en']);
    expect(english.stdout).not.toContain('Willkommen');
    expect(english.stdout).toContain('Acme');
  });

  test('usage errors exit 2: an unknown kind or language names the known ones', async () => {
    const kind = await run(['mail', 'preview', 'welcome']);
    expect(kind.code).toBe(2);
    expect(kind.stderr).toContain(`unknown kind "welcome"; the kinds are ${Object.keys(EMAIL_KINDS).join(', ')}`);
    const lang = await run(['mail', 'preview', 'password_reset', '--lang', 'it']);
    expect(lang.code).toBe(2);
    expect(lang.stderr).toContain('unknown language "it"; the languages are en, de, fr, es, ja, ar');
    for (const args of [[], ['--lang'], ['password_reset', '--pretty'], ['password_reset', 'email_changed']]) {
      const bad = await run(['mail', 'preview', ...args]);
      expect(bad.code).toBe(2);
      expect(bad.stderr).toContain('Usage: gatehouse mail preview');
      expect(bad.stdout).toBe('');
    }
  });

  test('a template with an unknown placeholder stops it, naming the file and the placeholder', async () => {
    const refused = await run(['mail', 'preview', 'password_reset'], { ...baseEnv(), EMAIL_TEMPLATES_DIR: badDir });
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain(`EMAIL_TEMPLATES_DIR: ${path.join(badDir, 'password_reset.en.txt')}: unknown placeholder {{token}}`);
  });
});
