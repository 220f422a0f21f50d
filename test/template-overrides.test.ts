/**
 * Email template overrides (EMAIL_TEMPLATES_DIR) from a folder of real files: each refusal at
 * start names the file and what is wrong, and rendering escapes values in HTML and leaves them
 * as they are in text and subjects.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, test } from 'vitest';
import { ConfigError, loadConfig } from '../src/config.js';
import { loadTemplateOverrides } from '../src/outbox/template-overrides.js';
import { TEST_JWT_SECRET } from './support/harness.js';

const KINDS = {
  verification: ['appName', 'url', 'lifetimeHours'],
  'email-sign-in': ['appName', 'url', 'code', 'lifetimeMinutes'],
  'email-changed': ['appName', 'newEmail', 'baseUrl'],
} as const;
const LANGUAGES = ['en', 'de', 'ar'] as const;

let dir: string;

function write(files: Record<string, string | Uint8Array>): void {
  for (const [name, content] of Object.entries(files)) fs.writeFileSync(path.join(dir, name), content);
}

/** The problems loading the folder reports; [] when it loads. */
function problems(): string[] {
  try {
    loadTemplateOverrides(dir, KINDS, LANGUAGES);
    return [];
  } catch (error) {
    if (error instanceof ConfigError) return error.problems;
    throw error;
  }
}

const at = (name: string): string => `EMAIL_TEMPLATES_DIR: ${path.join(dir, name)}`;

beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gatehouse-templates-'));
});

afterEach(() => {
  fs.rmSync(dir, { recursive: true, force: true });
});

describe('loadTemplateOverrides refuses at start', () => {
  test('a placeholder the kind does not offer, naming the file and the placeholder', () => {
    write({ 'verification.en.txt': 'Open {{url}} within {{lifetimeHours}} hours, {{name}}.\n' });
    expect(problems()).toEqual([`${at('verification.en.txt')}: unknown placeholder {{name}}; this kind offers {{appName}}, {{url}}, {{lifetimeHours}}`]);
  });

  test('another kind’s variable is unknown too', () => {
    write({ 'verification.de.html': '<p>{{code}}</p>' });
    expect(problems()).toEqual([`${at('verification.de.html')}: unknown placeholder {{code}}; this kind offers {{appName}}, {{url}}, {{lifetimeHours}}`]);
  });

  test('sections, inverted sections, partials and new delimiters, in any file', () => {
    write({
      'verification.en.txt': '{{#url}}x{{/url}}',
      'verification.de.txt': '{{^url}}x{{/url}}',
      'verification.ar.txt': '{{> footer}}',
      'email-sign-in.en.txt': '{{=<% %>=}} <% code %>',
    });
    expect(problems()).toEqual([
      `${at('email-sign-in.en.txt')}: {{=<% %>=}}: changing the delimiters ({{=…=}}) is not supported`,
      `${at('verification.ar.txt')}: {{> footer}}: partials ({{>…}}) are not supported`,
      `${at('verification.de.txt')}: {{^url}}: inverted sections ({{^…}}) are not supported: templates have no logic`,
      `${at('verification.en.txt')}: {{#url}}: sections ({{#…}}) are not supported: templates have no logic`,
    ]);
  });

  test('unescaped placeholders in HTML ({{{name}}} and {{&name}}), which text allows', () => {
    write({ 'email-changed.en.html': '<p>{{{newEmail}}} {{& appName}}</p>', 'email-changed.en.txt': '{{{newEmail}}} {{&appName}}\n' });
    expect(problems()).toEqual([
      `${at('email-changed.en.html')}: {{{newEmail}}}: unescaped placeholders ({{{…}}} and {{&…}}) are refused in HTML: every value is escaped there; write {{name}}`,
      `${at('email-changed.en.html')}: {{& appName}}: unescaped placeholders ({{{…}}} and {{&…}}) are refused in HTML: every value is escaped there; write {{name}}`,
    ]);
  });

  test('an unknown kind, an unknown language, or a name of another form', () => {
    write({ 'welcome.en.txt': 'hi', 'verification.fr.txt': 'salut', 'verification.en.htm': 'x', 'README.md': '# our templates', '.DS_Store': 'ignored' });
    expect(problems()).toEqual([
      `${at('README.md')}: expected a name <kind>.<lang>.txt, <kind>.<lang>.html or <kind>.<lang>.subject.txt`,
      `${at('verification.en.htm')}: expected a name <kind>.<lang>.txt, <kind>.<lang>.html or <kind>.<lang>.subject.txt`,
      `${at('verification.fr.txt')}: unknown language "fr"; the languages are en, de, ar`,
      `${at('welcome.en.txt')}: unknown kind "welcome"; the kinds are verification, email-sign-in, email-changed`,
    ]);
  });

  test('a file over 64 KiB, a file that is not UTF-8, a template that does not parse, a subject of two lines', () => {
    write({
      'verification.en.html': `<p>{{url}}</p>${' '.repeat(64 * 1024)}`,
      'verification.de.txt': Buffer.from([0x68, 0xff, 0x69]),
      'verification.ar.txt': 'Open {{url}',
      'verification.en.subject.txt': '{{appName}}\nsecond line\n',
    });
    expect(problems()).toEqual([
      `${at('verification.ar.txt')}: not a valid template: Unclosed tag at 11`,
      `${at('verification.de.txt')}: not UTF-8 text`,
      `${at('verification.en.html')}: 65 KiB; a template may be at most 64 KiB`,
      `${at('verification.en.subject.txt')}: a subject is one line`,
    ]);
  });

  test('a folder that does not exist, or a file in its place', () => {
    expect(() => loadTemplateOverrides(path.join(dir, 'absent'), KINDS, LANGUAGES)).toThrow(
      `EMAIL_TEMPLATES_DIR: cannot read ${path.join(dir, 'absent')}: no such folder (ENOENT)`,
    );
    write({ 'plain-file': 'x' });
    expect(() => loadTemplateOverrides(path.join(dir, 'plain-file'), KINDS, LANGUAGES)).toThrow(
      `EMAIL_TEMPLATES_DIR: ${path.join(dir, 'plain-file')} is not a folder`,
    );
  });
});

describe('rendering an override', () => {
  test('HTML escapes every value; text and subject take them as they are', () => {
    write({
      'email-changed.en.html':
        '<p>{{appName}}: your address is now <b>{{newEmail}}</b>. {{! a comment is dropped }}<a href="{{baseUrl}}/account">Account</a></p>\n',
      'email-changed.en.txt': '{{appName}}: your address is now {{newEmail}} ({{{newEmail}}}).\n',
      'email-changed.en.subject.txt': '{{appName}} – address changed to {{newEmail}}\n',
    });
    const overrides = loadTemplateOverrides(dir, KINDS, LANGUAGES);
    expect(overrides.count).toBe(3);
    const vars = { appName: 'Tom & Jerry', newEmail: '<script>alert(1)</script>@example.com', baseUrl: 'https://auth.example.com' };
    expect(overrides.render('email-changed', 'en', 'html', vars)).toBe(
      '<p>Tom &amp; Jerry: your address is now <b>&lt;script&gt;alert(1)&lt;/script&gt;@example.com</b>. <a href="https://auth.example.com/account">Account</a></p>\n',
    );
    expect(overrides.render('email-changed', 'en', 'text', vars)).toBe(
      'Tom & Jerry: your address is now <script>alert(1)</script>@example.com (<script>alert(1)</script>@example.com).\n',
    );
    expect(overrides.render('email-changed', 'en', 'subject', vars)).toBe('Tom & Jerry – address changed to <script>alert(1)</script>@example.com');
  });

  test('null where there is no override: another language, another part, another kind', () => {
    write({ 'verification.de.txt': 'Bestätigen: {{url}} ({{appName}})\n' });
    const overrides = loadTemplateOverrides(dir, KINDS, LANGUAGES);
    const vars = { appName: 'Acme', url: 'https://a.example/verify-email?token=x.y', lifetimeHours: '24' };
    expect(overrides.render('verification', 'de', 'text', vars)).toBe('Bestätigen: https://a.example/verify-email?token=x.y (Acme)\n');
    expect(overrides.render('verification', 'en', 'text', vars)).toBeNull();
    expect(overrides.render('verification', 'de', 'html', vars)).toBeNull();
    expect(overrides.render('email-sign-in', 'de', 'text', vars)).toBeNull();
  });

  test('only the kind’s own variables reach the template; one not given renders empty', () => {
    write({ 'verification.en.txt': '[{{appName}}] [{{url}}]' });
    const overrides = loadTemplateOverrides(dir, KINDS, LANGUAGES);
    expect(overrides.render('verification', 'en', 'text', { url: 'https://a.example/x' })).toBe('[] [https://a.example/x]');
  });

  test('an empty folder overrides nothing', () => {
    expect(loadTemplateOverrides(dir, KINDS, LANGUAGES).count).toBe(0);
  });
});

describe('EMAIL_TEMPLATES_DIR', () => {
  test('is read as given, null when unset; the folder is read while the configuration loads', () => {
    const unset = loadConfig({ JWT_SECRET: TEST_JWT_SECRET });
    expect(unset.emailTemplatesDir).toBeNull();
    expect(unset.emailTemplates).toBeNull();
    const set = loadConfig({ JWT_SECRET: TEST_JWT_SECRET, EMAIL_TEMPLATES_DIR: dir });
    expect(set.emailTemplatesDir).toBe(dir);
    expect(set.emailTemplates?.count).toBe(0);
    const missing = path.join(dir, 'missing');
    expect(() => loadConfig({ JWT_SECRET: TEST_JWT_SECRET, EMAIL_TEMPLATES_DIR: missing })).toThrow(
      `EMAIL_TEMPLATES_DIR: cannot read ${missing}: no such folder (ENOENT)`,
    );
  });
});
