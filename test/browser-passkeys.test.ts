/**
 * Passkeys end to end in a real headless Chromium (Debian's /usr/bin/chromium, driven by
 * playwright-core) against the real built server in development mode, with the DevTools
 * protocol's virtual authenticator (CTAP2, internal, resident keys, user verification) standing in
 * for the fingerprint reader. BASE_URL is http://localhost: a secure context, and a domain name
 * (browsers refuse an IP address as the relying party). Skipped without /usr/bin/chromium, unless
 * REQUIRE_BROWSER=1 (CI): support/browser.ts.
 */
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import type { CDPSession, Page } from 'playwright-core';
import { describe, expect, test } from 'vitest';
import { E2E_PASSWORD as PASSWORD, SCREENSHOTS, hasBrowser, useBrowserSuite } from './support/browser.js';

describe.skipIf(!hasBrowser)('passkeys in Chromium with a virtual authenticator', { timeout: 90_000 }, () => {
  const suite = useBrowserSuite({
    name: 'passkeys',
    host: 'localhost',
    env: () => ({ RATE_LIMIT_REGISTER: '1000/15m', RATE_LIMIT_LOGIN: '1000/15m', RATE_LIMIT_PASSKEY_LOGIN: '1000/15m' }),
  });

  /** A page whose browser has a platform authenticator: the virtual one, which answers at once. */
  async function openPageWithAuthenticator(): Promise<{ page: Page; cdp: CDPSession; authenticatorId: string }> {
    const page = await suite.openPage();
    const context = page.context();
    // The browser's autofill request (conditional UI) is answered at once by a virtual authenticator
    // that holds a credential, so /login would sign in by itself. The button is tested with it
    // switched off (localStorage.noAutofill), the autofill with it on.
    await context.addInitScript(() => {
      if (window.localStorage.getItem('noAutofill') === '1') {
        Object.defineProperty(PublicKeyCredential, 'isConditionalMediationAvailable', { value: () => Promise.resolve(false) });
      }
    });
    const cdp = await context.newCDPSession(page);
    await cdp.send('WebAuthn.enable');
    const { authenticatorId } = await cdp.send('WebAuthn.addVirtualAuthenticator', {
      options: {
        protocol: 'ctap2',
        transport: 'internal',
        hasResidentKey: true,
        hasUserVerification: true,
        isUserVerified: true,
        automaticPresenceSimulation: true,
      },
    });
    return { page, cdp, authenticatorId };
  }

  const waitForMessage = (page: Page, pattern: RegExp): Promise<string> => suite.waitForMessage(page, pattern, { timeout: 15_000 });

  async function signOut(page: Page): Promise<void> {
    await page.goto('/dashboard');
    await page.click('#sign-out-form button[type="submit"]');
    await page.waitForURL('**/login?signed_out=1');
  }

  test('sign up → /account add a passkey → sign out → sign in with it → remove it → it no longer signs in', async () => {
    const { page, cdp, authenticatorId } = await openPageWithAuthenticator();
    const email = `passkey-${randomBytes(4).toString('hex')}@example.com`;

    // Sign up.
    await page.goto('/register');
    await page.fill('#email', email);
    await page.fill('#password', PASSWORD);
    await page.click('button[type="submit"]');
    // Development mode shows the verification link first; the account is signed in already.
    await waitForMessage(page, /signed in/);
    // A passkey needs a verified address: confirm it from this signed-in browser.
    const devLink = page.locator('#dev-link-anchor');
    await devLink.waitFor({ state: 'visible' });
    await devLink.click();
    await page.waitForURL('**/verify-email');
    expect(await page.textContent('#registration')).toMatch(
      /^This account was created on [A-Z][a-z]+ \d{1,2}, \d{4} at \d{1,2}:\d{2} [AP]M UTC, from the address /,
    );
    await page.click('button[type="submit"]');
    await waitForMessage(page, /verified/);

    // /account: add a passkey (the account has a password: it is asked first).
    await page.goto('/account');
    await page.waitForSelector('#passkey-add-form:not([hidden])');
    await page.waitForFunction(() => document.querySelector('#passkey-list li')?.textContent === 'No passkey yet.');
    await page.fill('#passkey-name', 'Virtual key');
    await page.click('#passkey-add-form button[type="submit"]');
    expect(await waitForMessage(page, /password/)).toBe('Enter your current password to add a passkey.');
    await page.fill('#passkey-current', PASSWORD);
    await page.click('#passkey-add-form button[type="submit"]');
    expect(await waitForMessage(page, /added/)).toBe('Passkey "Virtual key" added. You can sign in with it now.');
    await page.waitForSelector('#passkey-list li[data-passkey-id]');
    expect(await page.locator('#passkey-list li strong').allTextContents()).toEqual(['Virtual key']);
    const { credentials } = await cdp.send('WebAuthn.getCredentials', { authenticatorId });
    expect(credentials).toHaveLength(1);
    expect(credentials[0]!.isResidentCredential).toBe(true);
    expect(credentials[0]!.rpId).toBe('localhost');

    // Rename it (renaming re-authenticates: the password beside the list).
    await page.fill('#passkey-manage-current', PASSWORD);
    await page.click('#passkey-list li button:text("Rename")');
    await page.fill('#passkey-list li input[name="name"]', 'My laptop');
    await page.click('#passkey-list li form button[type="submit"]');
    expect(await waitForMessage(page, /Renamed/)).toBe('Renamed to My laptop.');
    await page.waitForFunction(() => document.querySelector('#passkey-list li strong')?.textContent === 'My laptop');
    await page.screenshot({ path: path.join(SCREENSHOTS, 'account-passkeys.png'), fullPage: true });

    // Sign out; sign in with the passkey alone, by the button.
    const autofill = (on: boolean) => page.evaluate((value) => window.localStorage.setItem('noAutofill', value), on ? '0' : '1');
    await autofill(false);
    await signOut(page);
    await page.goto('/login');
    expect(await page.getAttribute('#email', 'autocomplete')).toBe('username webauthn');
    await page.waitForSelector('#passkey-button:visible');
    await page.screenshot({ path: path.join(SCREENSHOTS, 'login-passkey.png'), fullPage: true });
    await page.click('#passkey-button');
    await page.waitForURL('**/dashboard');
    const session = await page.evaluate(async () => (await fetch('/api/auth/session')).json());
    expect(session.user.email).toBe(email);
    expect(session.session.methods).toEqual(['passkey', 'user_verification']);
    expect(await page.evaluate(() => document.cookie)).not.toMatch(/gatehouse_passkey/);

    // And by the browser's autofill (conditional UI): /login starts the request by itself.
    await signOut(page);
    await autofill(true);
    await page.goto('/login');
    await page.waitForURL('**/dashboard');
    expect((await page.evaluate(async () => (await fetch('/api/auth/session')).json())).session.methods).toEqual(['passkey', 'user_verification']);
    await autofill(false);

    // /account: remove it (the account still has its password).
    await page.goto('/account');
    await page.waitForSelector('#passkey-list li[data-passkey-id]');
    expect(await page.locator('#passkey-list li span').first().textContent()).toMatch(/last used/);
    // Without the password, the page says what is missing; with it, the passkey goes.
    await page.click('#passkey-list li button:text("Remove")');
    expect(await waitForMessage(page, /rename or remove/)).toBe('Enter your current password to rename or remove a passkey.');
    await page.fill('#passkey-manage-current', PASSWORD);
    await page.click('#passkey-list li button:text("Remove")');
    expect(await waitForMessage(page, /Removed/)).toBe('Removed. "My laptop" no longer signs in to this account.');
    await page.waitForFunction(() => document.querySelector('#passkey-list li')?.textContent === 'No passkey yet.');

    // Sign out; the authenticator still holds the credential, the server no longer knows it.
    await signOut(page);
    expect((await cdp.send('WebAuthn.getCredentials', { authenticatorId })).credentials).toHaveLength(1);
    await page.goto('/login');
    await page.waitForSelector('#passkey-button:visible');
    await page.click('#passkey-button');
    const refused = 'That passkey was not accepted here. Sign in another way, or try another passkey.';
    expect(await waitForMessage(page, /passkey/)).toBe(refused);
    expect(new URL(page.url()).pathname).toBe('/login');
    expect(await page.evaluate(async () => (await fetch('/api/auth/session')).status)).toBe(401);
    // The autofill's answer is refused as visibly.
    await autofill(true);
    await page.goto('/login');
    expect(await waitForMessage(page, /passkey/)).toBe(refused);
    expect(await page.evaluate(async () => (await fetch('/api/auth/session')).status)).toBe(401);
  });
});
