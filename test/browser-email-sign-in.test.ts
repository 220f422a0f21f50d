/**
 * Sign-in by email (DESIGN §9.9) end to end in a real headless Chromium (Debian's
 * /usr/bin/chromium, driven by playwright-core) against the real built server in development
 * mode: the link through /email-sign-in and its Confirm button, and the code on /login.
 * Skipped without /usr/bin/chromium, unless REQUIRE_BROWSER=1 (CI): support/browser.ts.
 */
import { randomBytes } from 'node:crypto';
import type { Page } from 'playwright-core';
import { describe, expect, test } from 'vitest';
import { E2E_PASSWORD, hasBrowser, useBrowserSuite } from './support/browser.js';

describe.skipIf(!hasBrowser)('sign-in by email in Chromium', { timeout: 60_000 }, () => {
  const suite = useBrowserSuite({
    name: 'email-sign-in',
    env: () => ({ RATE_LIMIT_REGISTER: '1000/15m', RATE_LIMIT_EMAIL_SIGN_IN: '1000/15m', RATE_LIMIT_VERIFY_EMAIL: '1000/15m' }),
  });
  const { openPage, waitForMessage } = suite;

  async function newAccount(label: string): Promise<string> {
    const email = `${label}-${randomBytes(4).toString('hex')}@example.com`;
    const response = await fetch(`${suite.baseUrl}/api/auth/register`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email, password: E2E_PASSWORD }),
    });
    expect(response.status).toBe(201);
    return email;
  }

  const hasSession = async (page: Page): Promise<boolean> => (await page.context().cookies()).some((cookie) => cookie.name === 'gatehouse_session');

  test('the link: "Email me a sign-in link", then /email-sign-in spends the token only on Confirm and lands signed in', async () => {
    const email = await newAccount('link');
    const page = await openPage();
    await page.goto('/login?return_to=%2Faccount');
    await page.fill('#email', email); // /login's one email field: the link and the code send its address
    await page.click('#email-link-form button[type="submit"]');
    expect(await waitForMessage(page, /sign-in link/)).toBe('If this email address can sign in, we sent it a sign-in link and a code.');
    const link = await page.locator('#dev-link-anchor').getAttribute('href');
    expect(link).toMatch(/^\/email-sign-in\?token=/);
    await page.goto(link!);
    // The token left the address bar; opening the page signed nobody in.
    expect(new URL(page.url()).search).toBe('');
    expect(await hasSession(page)).toBe(false);
    await page.click('button[type="submit"]');
    await page.waitForURL('**/account');
    expect(await hasSession(page)).toBe(true);
    // Spent: the same link again says so.
    await page.goto(link!);
    await page.click('button[type="submit"]');
    expect(await waitForMessage(page, /invalid, expired or already used/)).toMatch(/Ask for a new one/);
  });

  test('the code on /login: a wrong code says so and stays; the right one signs in', async () => {
    const email = await newAccount('code');
    const page = await openPage();
    await page.goto('/login?return_to=%2Fdashboard');
    await page.fill('#email', email); // /login's one email field: the link and the code send its address
    const [answer] = await Promise.all([page.waitForResponse('**/api/auth/email-sign-in/request'), page.click('#email-link-form button[type="submit"]')]);
    const { code } = (await answer.json()) as { code: string };
    expect(code).toMatch(/^\d{6}$/);
    // The address is carried over to the code form.
    expect(await page.inputValue('#email-code-email')).toBe(email);
    await page.fill('#email-code', String((Number(code) + 1) % 1_000_000).padStart(6, '0'));
    await page.click('#email-code-form button[type="submit"]');
    expect(await waitForMessage(page, /not right/)).toBe('That code is not right, or it has expired. Check the email, or ask for a new one.');
    expect(new URL(page.url()).pathname).toBe('/login');
    await page.fill('#email-code', code);
    await page.click('#email-code-form button[type="submit"]');
    await page.waitForURL('**/dashboard');
    expect(await hasSession(page)).toBe(true);
  });
});
