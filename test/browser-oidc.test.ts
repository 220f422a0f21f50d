/**
 * Gatehouse as an OpenID Connect provider in a real headless Chromium (Debian's /usr/bin/chromium,
 * driven by playwright-core) against the real built server in development mode: an app on another
 * origin (support/relying-party-app.ts, openid-client 6 on 127.0.0.1) sends the person to
 * /oauth2/authorize, they sign in on /login (password and the code step, or a passkey from the
 * DevTools protocol's virtual authenticator), consent, and the app shows who signed in and how
 * (`amr`); signing out through the app ends Gatehouse's session too. Gatehouse is on localhost (a
 * passkey needs a host name); the app on 127.0.0.1 is another site, as a real app is. Skipped
 * without /usr/bin/chromium, unless REQUIRE_BROWSER=1 (CI): support/browser.ts.
 */
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import type { Page } from 'playwright-core';
import { afterEach, describe, expect, test } from 'vitest';
import { E2E_PASSWORD as PASSWORD, SCREENSHOTS, hasBrowser, useBrowserSuite } from './support/browser.js';
import { startRelyingPartyApp, type RelyingPartyApp } from './support/relying-party-app.js';
import { totp } from './support/totp-oracle.js';

const ADMIN_KEY = `browser-oidc-admin-${randomBytes(12).toString('hex')}`;

describe.skipIf(!hasBrowser)('an app on another origin signs people in through Gatehouse, in Chromium', { timeout: 90_000 }, () => {
  const suite = useBrowserSuite({
    name: 'oidc',
    host: 'localhost',
    env: () => ({
      ADMIN_API_KEY: ADMIN_KEY,
      ENCRYPTION_KEY_BASE64: randomBytes(32).toString('base64'),
      RATE_LIMIT_REGISTER: '1000/15m',
      RATE_LIMIT_LOGIN: '1000/15m',
      RATE_LIMIT_MFA_VERIFY: '1000/15m',
      RATE_LIMIT_PASSKEY_LOGIN: '1000/15m',
      RATE_LIMIT_OIDC_AUTHORIZE: '1000/1m',
    }),
  });
  const apps: RelyingPartyApp[] = [];
  afterEach(async () => {
    const failures = apps.flatMap((app) => app.failures);
    for (const app of apps.splice(0)) await app.close();
    expect(failures, "the app's own errors (a refused code, userinfo)").toEqual([]);
  });

  const api = async (pathname: string, body: unknown, cookie?: string): Promise<Response> =>
    fetch(`${suite.baseUrl}${pathname}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...(cookie === undefined ? {} : { cookie }) },
      body: JSON.stringify(body),
    });

  /** A new app (a third-party client of Gatehouse, registered over the admin API) on 127.0.0.1. */
  async function newApp(name: string): Promise<RelyingPartyApp> {
    const app = await startRelyingPartyApp();
    apps.push(app);
    const response = await fetch(`${suite.baseUrl}/api/admin/clients`, {
      method: 'POST',
      headers: { authorization: `Bearer ${ADMIN_KEY}`, 'content-type': 'application/json' },
      body: JSON.stringify({ name, redirectUris: [app.redirectUri], postLogoutRedirectUris: [app.postLogoutRedirectUri] }),
    });
    expect(response.status, await response.clone().text()).toBe(201);
    const { client, clientSecret } = (await response.json()) as { client: { clientId: string }; clientSecret?: string };
    await app.configure(suite.baseUrl, client.clientId, clientSecret);
    return app;
  }

  /** A new account over the API, its address verified through the development-mode token, and a session of it (cookie). */
  async function newAccount(label: string): Promise<{ email: string; id: string; cookie: string }> {
    const email = `${label}-${randomBytes(4).toString('hex')}@example.com`;
    const registered = await api('/api/auth/register', { email, password: PASSWORD });
    expect(registered.status).toBe(201);
    const { verificationToken } = (await registered.json()) as { verificationToken: string };
    expect((await api('/api/auth/verify-email', { token: verificationToken })).status).toBe(200);
    const login = await api('/api/auth/login', { email, password: PASSWORD });
    expect(login.status).toBe(200);
    const cookie = login.headers
      .getSetCookie()
      .map((header) => header.split(';')[0]!)
      .join('; ');
    const session = (await (await fetch(`${suite.baseUrl}/api/auth/session`, { headers: { cookie } })).json()) as { user: { id: string } };
    return { email, id: session.user.id, cookie };
  }

  /** Two-factor sign-in turned on over the API, as /account does; returns the authenticator's secret. */
  async function enableTotp(cookie: string): Promise<string> {
    const setup = await api('/api/auth/2fa/totp/setup', { currentPassword: PASSWORD }, cookie);
    expect(setup.status, await setup.clone().text()).toBe(200);
    const { secret } = (await setup.json()) as { secret: string };
    expect((await api('/api/auth/2fa/totp/enable', { code: totp(secret, Date.now()) }, cookie)).status).toBe(200);
    return secret;
  }

  /** The app's Sign in link, to Gatehouse's /login (with return_to the engine's step). */
  async function startAtApp(page: Page, app: RelyingPartyApp, screenshot?: string): Promise<void> {
    await page.goto(app.url);
    await page.click('#sign-in');
    await page.waitForURL(`${suite.baseUrl}/login?**`);
    expect(new URL(page.url()).searchParams.get('return_to')).toMatch(/^\/consent\/[\w-]+$/);
    if (screenshot !== undefined) await page.screenshot({ path: path.join(SCREENSHOTS, screenshot), fullPage: true });
  }

  /** The consent page names the app and the address; Allow or Deny, and the browser lands on the app. */
  async function consent(page: Page, app: RelyingPartyApp, appName: string, email: string, decision: 'Allow' | 'Deny', screenshot?: string): Promise<void> {
    await page.waitForURL(`${suite.baseUrl}/consent/**`);
    const text = await page.locator('main').textContent();
    expect(text).toContain(appName);
    expect(text).toContain(email);
    if (screenshot !== undefined) await page.screenshot({ path: path.join(SCREENSHOTS, screenshot), fullPage: true });
    await page.click(`form button[type="submit"]:text("${decision}")`);
    // A refusal on the way (a 403, a CSP block) leaves the browser on Gatehouse: say where, and what it says.
    await page.waitForURL(`${app.url}/callback?**`, { timeout: 15_000 }).catch(async (error: Error) => {
      throw new Error(`${error.message}; the browser is at ${page.url()}, showing: ${(await page.textContent('body'))?.trim().slice(0, 400)}`);
    });
  }

  test('password and the code step, consent, the app shows sub and amr with mfa; signing out through the app ends Gatehouse’s session', async () => {
    const person = await newAccount('oidc-totp');
    const secret = await enableTotp(person.cookie);
    const app = await newApp('Reports');
    const page = await suite.openPage();

    await startAtApp(page, app, 'oidc-login-from-app.png');
    await page.fill('#email', person.email);
    await page.fill('#password', PASSWORD);
    await page.click('#first-factor button[type="submit"]');
    await page.waitForSelector('#mfa-form:not([hidden])');
    // The next step's code: the current one was spent turning two-factor on.
    await page.fill('#mfa-code', totp(secret, Date.now(), 1));
    await page.click('#mfa-form button[type="submit"]');
    await consent(page, app, 'Reports', person.email, 'Allow', 'oidc-consent.png');

    expect(await page.locator('#sub').textContent()).toBe(person.id);
    expect((await page.locator('#amr').textContent())!.split(' ').sort()).toEqual(['mfa', 'otp', 'pwd']);
    expect(await page.locator('#email').textContent()).toBe(person.email);

    // Sign out through the app: Gatehouse asks to confirm, then returns to the app with its state.
    const signOutUrl = new URL((await page.getAttribute('#sign-out', 'href'))!);
    await page.click('#sign-out');
    await page.waitForURL(`${suite.baseUrl}/oauth2/end-session**`);
    await page.click('button[name="logout"][value="yes"]');
    await page.waitForURL(`${app.url}/signed-out?**`);
    expect(await page.locator('#state').textContent()).toBe(signOutUrl.searchParams.get('state'));
    expect(signOutUrl.searchParams.get('state')).toMatch(/^bye-/);

    // Gatehouse's own session of this browser ended too.
    await page.goto(`${suite.baseUrl}/login`);
    expect(await page.evaluate(async () => (await fetch('/api/auth/session')).status)).toBe(401);
  });

  test('a passkey on /login, consent, the app shows amr with hwk', async () => {
    const person = await newAccount('oidc-passkey');
    const app = await newApp('Passkey app');
    const page = await suite.openPage();
    const context = page.context();
    // The virtual authenticator would answer /login's autofill request at once: the button is tested.
    await context.addInitScript(() => {
      Object.defineProperty(PublicKeyCredential, 'isConditionalMediationAvailable', { value: () => Promise.resolve(false) });
    });
    const cdp = await context.newCDPSession(page);
    await cdp.send('WebAuthn.enable');
    await cdp.send('WebAuthn.addVirtualAuthenticator', {
      options: {
        protocol: 'ctap2',
        transport: 'internal',
        hasResidentKey: true,
        hasUserVerification: true,
        isUserVerified: true,
        automaticPresenceSimulation: true,
      },
    });

    // The passkey, added on /account while signed in with the password.
    await page.goto('/login?return_to=%2Faccount');
    await page.fill('#email', person.email);
    await page.fill('#password', PASSWORD);
    await page.click('#first-factor button[type="submit"]');
    await page.waitForURL('**/account');
    await page.waitForSelector('#passkey-add-form:not([hidden])');
    await page.fill('#passkey-name', 'Virtual key');
    await page.fill('#passkey-current', PASSWORD);
    await page.click('#passkey-add-form button[type="submit"]');
    await suite.waitForMessage(page, /added/, { timeout: 15_000 });
    // Signed out of Gatehouse (the cookies gone); the authenticator keeps the passkey.
    await context.clearCookies();

    await startAtApp(page, app);
    await page.waitForSelector('#passkey-button:visible');
    await page.click('#passkey-button');
    await consent(page, app, 'Passkey app', person.email, 'Allow');
    expect(await page.locator('#sub').textContent()).toBe(person.id);
    // A user-verified passkey: hardware key, the person verified on it, two factors in one.
    expect((await page.locator('#amr').textContent())!.split(' ').sort()).toEqual(['hwk', 'mfa', 'user']);
  });

  test('Deny on the consent page returns the app error=access_denied', async () => {
    const person = await newAccount('oidc-deny');
    const app = await newApp('Declined app');
    const page = await suite.openPage();
    await startAtApp(page, app);
    await page.fill('#email', person.email);
    await page.fill('#password', PASSWORD);
    await page.click('#first-factor button[type="submit"]');
    await consent(page, app, 'Declined app', person.email, 'Deny');
    expect(new URL(page.url()).searchParams.get('error')).toBe('access_denied');
    expect(await page.locator('#error').textContent()).toBe('access_denied');
  });
});
