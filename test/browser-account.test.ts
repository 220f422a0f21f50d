/**
 * /account and /confirm-email-change end to end in a real headless Chromium (Debian's
 * /usr/bin/chromium, driven by playwright-core) against the real built server in development
 * mode. Skipped without /usr/bin/chromium, unless REQUIRE_BROWSER=1 (CI): support/browser.ts.
 */
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import type { Page } from 'playwright-core';
import { describe, expect, test } from 'vitest';
import { E2E_PASSWORD as PASSWORD, SCREENSHOTS, hasBrowser, useBrowserSuite } from './support/browser.js';
import { totp } from './support/totp-oracle.js';

describe.skipIf(!hasBrowser)('the account page in Chromium', { timeout: 60_000 }, () => {
  const suite = useBrowserSuite({
    name: 'account',
    env: () => ({
      RATE_LIMIT_REGISTER: '1000/15m',
      RATE_LIMIT_LOGIN: '1000/15m',
      RATE_LIMIT_EMAIL_CHANGE: '1000/1h',
      RATE_LIMIT_MFA_VERIFY: '1000/15m',
      ENCRYPTION_KEY_BASE64: randomBytes(32).toString('base64'),
    }),
  });
  const { openPage, waitForMessage } = suite;

  async function signedInAt(email: string, path = '/account'): Promise<Page> {
    const page = await openPage();
    await page.goto(`/login?return_to=${encodeURIComponent(path)}`);
    await page.fill('#email', email);
    await page.fill('#password', PASSWORD);
    await page.click('button[type="submit"]');
    await page.waitForURL(`**${path}`);
    return page;
  }

  /** A new account over the API, its address verified through the development-mode token. */
  async function newAccount(label: string): Promise<string> {
    const email = `${label}-${randomBytes(4).toString('hex')}@example.com`;
    const response = await fetch(`${suite.baseUrl}/api/auth/register`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email, password: PASSWORD }),
    });
    expect(response.status).toBe(201);
    const { verificationToken } = (await response.json()) as { verificationToken: string };
    const verified = await fetch(`${suite.baseUrl}/api/auth/verify-email`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ token: verificationToken }),
    });
    expect(verified.status).toBe(200);
    return email;
  }

  test('/account without a session sends the visitor to sign in and back; the dashboard links to it', async () => {
    const email = await newAccount('nav');
    const page = await openPage();
    await page.goto('/account');
    expect(new URL(page.url()).search).toBe('?return_to=%2Faccount');
    await page.fill('#email', email);
    await page.fill('#password', PASSWORD);
    await page.click('button[type="submit"]');
    await page.waitForURL('**/account');
    await page.goto('/dashboard');
    await page.click('a[href="/account"]');
    await page.waitForURL('**/account');
  });

  test('sessions: this browser is marked; "Sign out everywhere else" ends the other one', async () => {
    const email = await newAccount('sessions');
    const other = await signedInAt(email, '/dashboard');
    const page = await signedInAt(email);
    await page.waitForSelector('#session-list li.item--current');
    // The other browser and this one: the registration's session ended when the address was verified without it.
    expect(await page.locator('#session-list li').count()).toBe(2);
    expect(await page.locator('#session-list li.item--current strong').textContent()).toMatch(/^This browser — .*Chrome/);
    await page.screenshot({ path: path.join(SCREENSHOTS, 'account-desktop.png'), fullPage: true });
    await page.click('#revoke-others');
    expect(await waitForMessage(page, /Signed out/)).toBe('Signed out 1 other session.');
    await page.waitForFunction(() => document.querySelectorAll('#session-list li').length === 1);
    await other.goto('/dashboard');
    expect(new URL(other.url()).pathname).toBe('/login');
  });

  test('password change: a wrong current password stays and says so; the right one changes it', async () => {
    const email = await newAccount('password');
    const page = await signedInAt(email);
    await page.fill('#password-current', 'Not-The-Password-1');
    await page.fill('#new-password', 'Brand-New-Pass-7');
    await page.click('#password-form button[type="submit"]');
    expect(await waitForMessage(page, /current password/)).toBe('The current password is not correct.');
    expect(new URL(page.url()).pathname).toBe('/account');
    await page.fill('#password-current', PASSWORD);
    await page.fill('#new-password', 'Brand-New-Pass-7');
    await page.click('#password-form button[type="submit"]');
    expect(await waitForMessage(page, /changed/)).toBe('Your password is changed. Every other session was signed out.');
  });

  test('a lost session sends the person to sign in, and back to /account', async () => {
    const email = await newAccount('lost');
    const page = await signedInAt(email);
    await page.waitForSelector('#session-list li.item--current');
    // Every list of the page loaded first: a list still loading when the session ends (the
    // organizations) would send the page to sign in before the form is used.
    await page.waitForLoadState('networkidle');
    // Signed out from elsewhere: every session of the account ends (a password reset would too).
    const cookies = await page.context().cookies();
    const session = cookies.find((cookie) => cookie.name === 'gatehouse_session')!;
    await fetch(`${suite.baseUrl}/api/auth/logout`, { method: 'POST', headers: { cookie: `${session.name}=${session.value}` } });
    await page.fill('#password-current', PASSWORD);
    await page.fill('#new-password', 'Brand-New-Pass-7');
    await page.click('#password-form button[type="submit"]');
    await page.waitForURL('**/login?return_to=%2Faccount');
  });

  test('email change through the development link: the confirm page spends the token only on Confirm', async () => {
    const email = await newAccount('email');
    const newEmail = `moved-${randomBytes(4).toString('hex')}@example.com`;
    const page = await signedInAt(email);
    await page.fill('#new-email', newEmail);
    await page.fill('#email-current', PASSWORD);
    await page.click('#email-form button[type="submit"]');
    expect(await waitForMessage(page, /We sent a link/)).toContain(newEmail);
    const link = await page.locator('#dev-link-anchor').getAttribute('href');
    expect(link).toMatch(/^\/confirm-email-change\?token=/);
    await page.goto(link!);
    // The token left the address bar; opening the page changed nothing yet.
    expect(new URL(page.url()).search).toBe('');
    await page.goto('/account');
    expect(await page.locator('#current-email').textContent()).toBe(email);
    await page.goto(link!);
    await page.click('#confirm-email-change-form button[type="submit"]');
    expect(await waitForMessage(page, /changed/)).toBe('Your email address is changed and verified.');
    await page.goto('/account');
    expect(await page.locator('#current-email').textContent()).toBe(newEmail);
  });

  test('delete: the typed confirmation is required, then the account is gone', async () => {
    const email = await newAccount('delete');
    const page = await signedInAt(email);
    await page.fill('#delete-current', PASSWORD);
    await page.click('#delete-form button[type="submit"]');
    expect(await waitForMessage(page, /Type DELETE/)).toBe('Type DELETE to confirm.');
    await page.fill('#delete-confirm', 'DELETE');
    await page.click('#delete-form button[type="submit"]');
    expect(await waitForMessage(page, /deleted/)).toBe('Your account is deleted. Goodbye.');
    const login = await fetch(`${suite.baseUrl}/api/auth/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email, password: PASSWORD }),
    });
    expect(login.status).toBe(401);
  });

  test('two-factor: set up on /account with the QR code, then sign in with the code step of the login page', async () => {
    const email = await newAccount('totp');
    const page = await signedInAt(email);
    await page.waitForFunction(() => document.getElementById('mfa-status')?.textContent === 'Off.');
    await page.fill('#mfa-setup-current', PASSWORD);
    await page.click('#mfa-setup-form button[type="submit"]');
    await page.waitForSelector('#mfa-enable-form:not([hidden])');
    const secret = (await page.locator('#mfa-secret').textContent())!;
    expect(secret).toMatch(/^[A-Z2-7]{32}$/);
    // The QR code is an image made by the server: a data: SVG, which the pages' CSP allows.
    expect(await page.locator('#mfa-qr').getAttribute('src')).toMatch(/^data:image\/svg\+xml/);
    expect(await page.locator('#mfa-qr').evaluate((img: HTMLImageElement) => img.complete && img.naturalWidth > 0)).toBe(true);
    await page.screenshot({ path: path.join(SCREENSHOTS, 'account-2fa-setup-desktop.png'), fullPage: true });
    await page.fill('#mfa-code', totp(secret, Date.now()));
    await page.click('#mfa-enable-form button[type="submit"]');
    expect(await waitForMessage(page, /on/)).toBe('Two-factor sign-in is on.');
    expect(await page.locator('#mfa-code-list li').count()).toBe(10);
    const recoveryCode = (await page.locator('#mfa-code-list li').first().textContent())!;

    const login = await openPage();
    await login.goto('/login');
    await login.fill('#email', email);
    await login.fill('#password', PASSWORD);
    await login.click('#first-factor button[type="submit"]');
    await login.waitForSelector('#mfa-form:not([hidden])');
    await login.fill('#mfa-code', '000000' === totp(secret, Date.now(), 1) ? '111111' : '000000');
    await login.click('#mfa-form button[type="submit"]');
    expect(await waitForMessage(login, /not right/)).toContain('That code is not right.');
    await login.fill('#mfa-code', totp(secret, Date.now(), 1));
    await login.click('#mfa-form button[type="submit"]');
    await login.waitForURL('**/dashboard');

    const withRecovery = await openPage();
    await withRecovery.goto('/login');
    await withRecovery.fill('#email', email);
    await withRecovery.fill('#password', PASSWORD);
    await withRecovery.click('#first-factor button[type="submit"]');
    await withRecovery.waitForSelector('#mfa-form:not([hidden])');
    await withRecovery.fill('#mfa-code', recoveryCode);
    await withRecovery.click('#mfa-form button[type="submit"]');
    await withRecovery.waitForURL('**/dashboard');
  });
});
