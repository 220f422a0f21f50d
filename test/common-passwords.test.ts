/**
 * Common passwords are refused (ASVS 5.0 6.2.4, NIST 800-63B), after NFKC and case-folding, and by
 * their base (`Password1!` → `password`), with the app's name and the email as context words: the
 * module's interface, then over HTTP at register and at reset confirm.
 */
import { afterEach, beforeEach, describe, expect, test } from 'vitest';
import { readFileSync } from 'node:fs';
import { COMMON_PASSWORD_MESSAGE, foldedCommonPasswordList, isCommonPassword, passwordBases } from '../src/credentials/common-passwords.js';
import { STRONG_PASSWORD, createTestGatehouse, describeEachDialect, type TestGatehouse } from './support/harness.js';

describe('isCommonPassword()', () => {
  test('the list itself, after NFKC and case-folding: fullwidth and capitals do not hide a common password', () => {
    for (const password of ['password', 'PASSWORD', 'qwerty123', 'iloveyou', 'Ｐａｓｓｗｏｒｄ', 'P@ssw0rd', 'trustno1']) {
      expect(isCommonPassword(password), password).toBe(true);
    }
  });

  test('decorated to satisfy the rules, the base is still common: trailing digits and symbols, a leading capital', () => {
    for (const password of ['Password1!', 'Welcome2024!', 'Qwerty123!', 'Summer2025!', 'Dragon99$', 'Iloveyou1!', 'Abc12345!', 'Ｐａｓｓｗｏｒｄ１！']) {
      expect(isCommonPassword(password), password).toBe(true);
    }
    expect(passwordBases('Welcome2024!')).toEqual(['welcome2024!', 'welcome2024', 'welcome']);
  });

  test('passwords that are not on the list pass, and a short base is not compared', () => {
    for (const password of [STRONG_PASSWORD, 'Xk#9vB2q!m', 'Brand-New-Pass-7', 'Tr0ub4dor&3-horse', 'Xy99999999!']) {
      expect(isCommonPassword(password), password).toBe(false);
    }
  });

  test('the build writes the folded list the server reads (npm run build: dist/credentials/common-passwords.txt)', () => {
    const built = readFileSync(new URL('../dist/credentials/common-passwords.txt', import.meta.url), 'utf8');
    expect(built).toBe(foldedCommonPasswordList());
    const entries = built.split('\n').filter((entry) => entry !== '');
    expect(entries.length).toBeGreaterThan(10_000);
    expect(entries).toContain('password');
  });

  test('context words: the app name and the email local part, decorated or not', () => {
    expect(isCommonPassword('Gatehouse2026!', ['Gatehouse', 'rita.lopez'])).toBe(true);
    expect(isCommonPassword('Rita.lopez1!', ['Gatehouse', 'rita.lopez'])).toBe(true);
    expect(isCommonPassword('Rita.lopez1!', ['Gatehouse', 'sam'])).toBe(false);
    expect(isCommonPassword('Gatehouse2026!')).toBe(false);
  });
});

describeEachDialect('common passwords over HTTP', (dialect) => {
  let t: TestGatehouse;
  beforeEach(async () => {
    t = await createTestGatehouse(dialect, { env: { NODE_ENV: 'development', APP_NAME: 'Lighthouse' } });
  });
  afterEach(async () => {
    await t.close();
  });

  const register = (email: string, password: string) => t.request('POST', '/api/auth/register', { json: { email, password } });
  const issuesOf = async (response: Response): Promise<Array<{ path: string; message: string }>> => (await response.json()).issues;

  test('register refuses a common password with its own issue on password, and creates nothing', async () => {
    for (const password of ['Password1!', 'Welcome2024!', 'Ｐａｓｓｗｏｒｄ１！']) {
      const response = await register('new@example.com', password);
      expect(response.status, password).toBe(400);
      expect(await issuesOf(response)).toEqual([{ path: 'password', message: COMMON_PASSWORD_MESSAGE }]);
    }
    expect(await t.gatehouse.stores.users.findUserByEmail('new@example.com')).toBeNull();
  });

  test('a password that also breaks a rule gets both issues in one answer', async () => {
    const response = await register('new@example.com', 'password1');
    expect(response.status).toBe(400);
    const messages = (await issuesOf(response)).map((issue) => issue.message);
    expect(messages).toContain('must contain an uppercase letter');
    expect(messages).toContain(COMMON_PASSWORD_MESSAGE);
  });

  test('register refuses the app name and the email local part as a base', async () => {
    const appName = await register('someone@example.com', 'Lighthouse2026!');
    expect(appName.status).toBe(400);
    expect(await issuesOf(appName)).toEqual([{ path: 'password', message: COMMON_PASSWORD_MESSAGE }]);
    const localPart = await register('rita.lopez@example.com', 'Rita.lopez1!');
    expect(localPart.status).toBe(400);
    expect((await register('rita.lopez@example.com', STRONG_PASSWORD)).status).toBe(201);
  });

  test('reset confirm refuses a common password without spending the token; another password then works', async () => {
    expect((await register('rita.lopez@example.com', STRONG_PASSWORD)).status).toBe(201);
    const { token } = await (await t.request('POST', '/api/auth/password-reset/request', { json: { email: 'rita.lopez@example.com' } })).json();
    const confirm = (password: string) => t.request('POST', '/api/auth/password-reset/confirm', { json: { token, password } });
    for (const password of ['Summer2025!', 'Rita.lopez2!', 'Lighthouse1!']) {
      const refused = await confirm(password);
      expect(refused.status, password).toBe(400);
      expect(await issuesOf(refused)).toEqual([{ path: 'password', message: COMMON_PASSWORD_MESSAGE }]);
    }
    expect((await confirm('Brand-New-Pass-7')).status).toBe(200);
    expect((await t.request('POST', '/api/auth/login', { json: { email: 'rita.lopez@example.com', password: 'Brand-New-Pass-7' } })).status).toBe(200);
  });
});
