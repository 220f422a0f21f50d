/**
 * The pages end to end in a real headless Chromium (Debian's /usr/bin/chromium, driven by
 * playwright-core; no browser is ever downloaded) against the real built server in development
 * mode. Every flow is finished through the pages alone, using the development-mode links instead
 * of email. Screenshots of each page at desktop and phone width go to test-results/screenshots/.
 *
 * Without /usr/bin/chromium the suite is skipped with a message, unless REQUIRE_BROWSER=1 (CI),
 * where a missing browser fails the run instead of silently testing less.
 */
import { randomBytes } from 'node:crypto';
import http from 'node:http';
import path from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { E2E_PASSWORD as PASSWORD, SCREENSHOTS, hasBrowser, useBrowserSuite } from './support/browser.js';
import { startFakeGitHub, type FakeGitHub } from './support/fake-github.js';
import { startOidcProvider, type RealOidcProvider } from './support/oidc-provider.js';
import { freePort } from './support/free-port.js';

/** Desktop height 800 here: the screenshots of these pages are compared by eye at that size. */
const DESKTOP = { width: 1280, height: 800 };
const PHONE = { width: 390, height: 844 };

/**
 * A front end on an origin of its own (another port on loopback): it serves one empty page, from
 * which a test runs `fetch` against Gatehouse as that front end's script would.
 */
async function startFrontEnd(port: number): Promise<{ origin: string; close(): Promise<void> }> {
  const frontEnd = http.createServer((_request, response) => {
    response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
    response.end('<!doctype html><title>front end</title><p>front end</p>');
  });
  await new Promise<void>((resolve) => frontEnd.listen(port, '127.0.0.1', resolve));
  return {
    origin: `http://127.0.0.1:${port}`,
    close: () => new Promise((resolve) => frontEnd.close(() => resolve())),
  };
}

function uniqueEmail(label: string): string {
  return `${label}-${randomBytes(4).toString('hex')}@example.com`;
}

describe.skipIf(!hasBrowser)('pages in Chromium', { timeout: 60_000 }, () => {
  /** A GitHub-compatible server on loopback (authorize page, token endpoint, API). */
  let github: FakeGitHub;
  /** A front end listed in TRUSTED_ORIGINS, and one that is not. */
  let trustedFrontEnd: Awaited<ReturnType<typeof startFrontEnd>>;
  let foreignFrontEnd: Awaited<ReturnType<typeof startFrontEnd>>;

  beforeAll(async () => {
    github = await startFakeGitHub({ clientId: 'e2e-client-id', clientSecret: 'e2e-client-secret' });
    trustedFrontEnd = await startFrontEnd(await freePort());
    foreignFrontEnd = await startFrontEnd(await freePort());
  });
  afterAll(async () => {
    await github?.close();
    await trustedFrontEnd?.close();
    await foreignFrontEnd?.close();
  });

  // The provider redirects back to BASE_URL, the address the browser uses.
  const suite = useBrowserSuite({
    name: 'pages',
    env: () => ({
      // One browser signs in many times from 127.0.0.1; rate limits must not end the suite,
      // while the login lock keeps its defaults for the lock test.
      RATE_LIMIT_REGISTER: '1000/15m',
      RATE_LIMIT_LOGIN: '1000/15m',
      RATE_LIMIT_PASSWORD_RESET_REQUEST: '1000/15m',
      RATE_LIMIT_PASSWORD_RESET_CONFIRM: '1000/15m',
      RATE_LIMIT_VERIFY_EMAIL: '1000/15m',
      RATE_LIMIT_RESEND_VERIFICATION: '1000/15m',
      LOCKOUT_MAX_FAILURES: '5',
      LOCKOUT_DURATION: '15m',
      // The lock probe below claims another client address through X-Forwarded-For, so its
      // failures never count against the browser's own address.
      TRUST_PROXY: '1',
      GITHUB_CLIENT_ID: 'e2e-client-id',
      GITHUB_CLIENT_SECRET: 'e2e-client-secret',
      GITHUB_AUTH_URL: github.authUrl,
      GITHUB_API_URL: github.apiUrl,
      TRUSTED_ORIGINS: trustedFrontEnd.origin,
      AUTH_SECRET: randomBytes(24).toString('base64url'),
      ENCRYPTION_KEY_BASE64: randomBytes(32).toString('base64'),
    }),
  });
  /** A fresh browser profile (no cookies) at desktop size. */
  const openPage = (): Promise<Page> => suite.openPage(DESKTOP);

  /** The text the message area shows once it shows something. */
  async function messageText(page: Page): Promise<string> {
    await page.waitForFunction(() => (document.getElementById('message')?.textContent ?? '').trim() !== '');
    return (await page.locator('#message').textContent())!.trim();
  }

  const waitForMessage = (page: Page, pattern: RegExp): Promise<string> => suite.waitForMessage(page, pattern);

  /**
   * Saves the page at desktop and phone width and checks that at phone width nothing needs
   * sideways scrolling.
   */
  async function screenshots(page: Page, name: string): Promise<void> {
    await page.setViewportSize(DESKTOP);
    await page.screenshot({ path: path.join(SCREENSHOTS, `${name}-desktop.png`), fullPage: true });
    await page.setViewportSize(PHONE);
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
    expect(overflow, `${name}: sideways scrolling at phone width`).toBeLessThanOrEqual(0);
    await page.screenshot({ path: path.join(SCREENSHOTS, `${name}-phone.png`), fullPage: true });
    await page.setViewportSize(DESKTOP);
  }

  /** Creates an account over the API from outside the browser (the browser stays signed out). */
  async function createAccount(email: string, password = PASSWORD): Promise<void> {
    const response = await fetch(`${suite.baseUrl}/api/auth/register`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email, password }),
    });
    expect(response.status).toBe(201);
  }

  async function signIn(page: Page, email: string, password: string): Promise<void> {
    await page.fill('#email', email);
    await page.fill('#password', password);
    await page.click('button[type="submit"]');
  }

  test('register → dashboard, with the password rules checked as the person types', async () => {
    const page = await openPage();
    const email = uniqueEmail('register');
    await page.goto('/register');
    expect(await page.title()).toBe('Create an account · Gatehouse');
    await screenshots(page, 'register');

    await page.fill('#email', email);
    await page.locator('#password').pressSequentially('abc');
    const met = (): Promise<string[]> => page.$$eval('#password-rules .rule--met', (items) => items.map((item) => item.getAttribute('data-rule') ?? ''));
    expect(await met()).toEqual(['lower']);
    expect(await page.locator('[data-rule="lower"] .rule-state').textContent()).toBe(' (done)');
    expect(await page.locator('[data-rule="digit"] .rule-state').textContent()).toBe(' (not yet)');

    await page.click('button[type="submit"]');
    expect(await waitForMessage(page, /rule/)).toBe('The password does not meet every rule listed below it yet.');
    expect(await page.getAttribute('#password', 'aria-invalid')).toBe('true');
    expect(await page.evaluate(() => document.activeElement?.id)).toBe('password');
    await screenshots(page, 'register-rules-unmet');

    await page.locator('#password').pressSequentially('D-9xyz');
    expect((await met()).sort()).toEqual(['digit', 'length', 'lower', 'special', 'upper']);

    await page.click('button[type="submit"]');
    expect(await waitForMessage(page, /created/)).toMatch(/Your account is created and you are signed in/);
    const devLink = page.locator('#dev-link-anchor');
    await devLink.waitFor({ state: 'visible' });
    expect(await devLink.getAttribute('href')).toMatch(/^\/verify-email\?token=[\w.%-]+$/);
    await screenshots(page, 'register-done');

    await page.click('#continue a');
    await page.waitForURL('**/dashboard');
    expect(await page.title()).toBe('Your account · Gatehouse');
    expect(await page.textContent('#account-email')).toBe(email);
    expect(await page.textContent('#verification-status')).toBe('Not verified yet');
    await screenshots(page, 'dashboard');
  });

  test('registering an email that exists says so in words', async () => {
    const email = uniqueEmail('taken');
    await createAccount(email);
    const page = await openPage();
    await page.goto('/register');
    await page.fill('#email', email.toUpperCase());
    await page.fill('#password', PASSWORD);
    await page.click('button[type="submit"]');
    expect(await waitForMessage(page, /exists/)).toBe('An account with this email address already exists. Sign in, or reset your password.');
  });

  test('verify the email through the dev link: a plain GET of the link verifies nothing, the Confirm click does', async () => {
    const page = await openPage();
    await page.goto('/register');
    await page.fill('#email', uniqueEmail('verify'));
    await page.fill('#password', PASSWORD);
    await page.click('button[type="submit"]');
    const devLink = page.locator('#dev-link-anchor');
    await devLink.waitFor({ state: 'visible' });
    const href = (await devLink.getAttribute('href'))!;

    // A mail scanner fetching the link, twice, without cookies.
    for (let i = 0; i < 2; i++) expect((await fetch(`${suite.baseUrl}${href}`)).status).toBe(200);
    await devLink.click();
    // Once the page has read the token, it leaves the address bar and the history.
    await page.waitForURL(`${suite.baseUrl}/verify-email`);
    expect(await page.evaluate(() => window.location.search)).toBe('');
    expect(await page.title()).toBe('Confirm your email address · Gatehouse');
    await screenshots(page, 'verify-email');
    const before = (await (await page.request.get('/api/auth/session')).json()) as { user: { emailVerified: boolean } };
    expect(before.user.emailVerified).toBe(false);

    await page.click('button[type="submit"]');
    expect(await waitForMessage(page, /verified/)).toBe('Your email address is verified. Thank you.');
    await screenshots(page, 'verify-email-done');
    await page.click('#continue a');
    await page.waitForURL('**/dashboard');
    expect(await page.textContent('#verification-status')).toBe('Verified');
    expect(await page.locator('#resend-form').count()).toBe(0);

    // The link works once.
    await page.goto(href);
    await page.click('button[type="submit"]');
    expect(await waitForMessage(page, /invalid/)).toBe('This verification link is invalid or has expired. Ask for a new one.');
  });

  test('resend verification from the dashboard shows a new dev link that verifies', async () => {
    const page = await openPage();
    const email = uniqueEmail('resend');
    expect((await page.request.post('/api/auth/register', { data: { email, password: PASSWORD } })).status()).toBe(201);
    await page.goto('/dashboard');
    await page.click('#resend-form button');
    expect(await waitForMessage(page, /sent/)).toBe('We sent a new verification link to your email address. Earlier links no longer work.');
    await page.click('#dev-link-anchor');
    await page.waitForURL(`${suite.baseUrl}/verify-email`);
    await page.click('button[type="submit"]');
    await waitForMessage(page, /verified/);
  });

  test('sign out, after which the dashboard sends a visitor to sign in and back', async () => {
    const page = await openPage();
    const email = uniqueEmail('signout');
    expect((await page.request.post('/api/auth/register', { data: { email, password: PASSWORD } })).status()).toBe(201);
    await page.goto('/dashboard');
    await page.click('#sign-out-form button');
    await page.waitForURL('**/login?signed_out=1');
    expect(await messageText(page)).toBe('You are signed out.');

    await page.goto('/dashboard');
    await page.waitForURL('**/login?return_to=%2Fdashboard');
    await signIn(page, email, PASSWORD);
    await page.waitForURL('**/dashboard');
    expect(await page.textContent('#account-email')).toBe(email);
  });

  test('a wrong password shows the error above the form, which stays in view; the right one signs in', async () => {
    const email = uniqueEmail('wrong');
    await createAccount(email);
    const page = await openPage();
    await page.goto('/login');
    expect(await page.title()).toBe('Sign in · Gatehouse');
    await screenshots(page, 'login');
    await signIn(page, email, 'Wrong-Password-1');
    expect(await waitForMessage(page, /not correct/)).toBe('The email address or password is not correct.');
    expect(await page.getAttribute('#message', 'role')).toBe('alert');
    // The message takes room only once shown, between the heading and the form; the button stays in view.
    const message = (await page.locator('#message').boundingBox())!;
    const buttonAfter = (await page.locator('#first-factor button[type="submit"]').boundingBox())!;
    expect(buttonAfter.y).toBeGreaterThan(message.y + message.height);
    expect(buttonAfter.y + buttonAfter.height).toBeLessThan(DESKTOP.height);
    await screenshots(page, 'login-error');

    await page.fill('#password', PASSWORD);
    await page.press('#password', 'Enter');
    await page.waitForURL('**/dashboard');
  });

  test('an empty or malformed email is caught before anything is sent', async () => {
    const page = await openPage();
    await page.goto('/login');
    await page.click('button[type="submit"]');
    expect(await waitForMessage(page, /email/)).toBe('Enter your email address.');
    await page.fill('#email', 'not-an-email');
    await page.click('button[type="submit"]');
    expect(await waitForMessage(page, /valid/)).toBe('Enter a valid email address, such as name@example.com.');
    expect(await page.evaluate(() => document.activeElement?.id)).toBe('email');
  });

  test('forgot → reset through the dev link → sign in with the new password', async () => {
    const email = uniqueEmail('reset');
    await createAccount(email);
    const page = await openPage();
    await page.goto('/forgot-password');
    expect(await page.title()).toBe('Reset your password · Gatehouse');
    await screenshots(page, 'forgot-password');
    await page.fill('#email', email);
    await page.click('button[type="submit"]');
    expect(await waitForMessage(page, /If an account exists/)).toBe('If an account exists for this email address, we sent it a link to reset the password.');
    await screenshots(page, 'forgot-password-sent');

    await page.click('#dev-link-anchor');
    await page.waitForURL(`${suite.baseUrl}/reset-password`);
    expect(await page.evaluate(() => window.location.search)).toBe('');
    expect(await page.title()).toBe('Choose a new password · Gatehouse');
    await screenshots(page, 'reset-password');
    await page.fill('#password', 'Brand-New-Pass-7');
    await page.click('button[type="submit"]');
    expect(await waitForMessage(page, /changed/)).toBe('Your password has been changed. Sign in with your new password.');
    await page.click('#continue a');
    await page.waitForURL('**/login');

    await signIn(page, email, PASSWORD);
    await waitForMessage(page, /not correct/);
    await page.fill('#password', 'Brand-New-Pass-7');
    await page.click('button[type="submit"]');
    await page.waitForURL('**/dashboard');
  });

  test('keyboard only: the skip link, visible focus, then fill and submit the login form with Tab, typing and Enter', async () => {
    const email = uniqueEmail('keyboard');
    await createAccount(email);
    const page = await openPage();
    await page.goto('/login');
    const focused = (): Promise<string | undefined> => page.evaluate(() => document.activeElement?.id || document.activeElement?.className);
    // The email field has autofocus; one step back is the skip link, shown when focused.
    expect(await focused()).toBe('email');
    await page.keyboard.press('Shift+Tab');
    expect(await focused()).toBe('skip-link');
    const skip = await page.locator('.skip-link').boundingBox();
    expect(skip!.y).toBeGreaterThanOrEqual(0);
    await page.keyboard.press('Tab');
    expect(await focused()).toBe('email');

    await page.keyboard.type(email);
    await page.keyboard.press('Tab');
    expect(await focused()).toBe('password');
    expect(await page.evaluate(() => getComputedStyle(document.activeElement!).outlineStyle)).toBe('solid');
    await page.keyboard.type(PASSWORD);
    await page.keyboard.press('Tab');
    expect(await page.evaluate(() => document.activeElement?.textContent)).toBe('Sign in');
    expect(await page.evaluate(() => getComputedStyle(document.activeElement!).outlineStyle)).toBe('solid');
    await page.keyboard.press('Shift+Tab');
    await page.keyboard.press('Enter');
    await page.waitForURL('**/dashboard');
  });

  test("the login page shows our own sentence for a provider error, never the query's text or markup", async () => {
    const page = await openPage();
    const hostile = '<img src=x onerror="window.__pwned=1"><b>bold</b>';
    await page.goto(`/login?error=oauth_error&message=${encodeURIComponent(hostile)}`);
    const text = await messageText(page);
    expect(text).toBe('GitHub did not let you sign in.');
    expect(await page.locator('#message img, #message b').count()).toBe(0);
    expect(await page.evaluate(() => (window as unknown as { __pwned?: number }).__pwned)).toBeUndefined();
    await screenshots(page, 'login-provider-error');
    expect(await page.getAttribute('#github-sign-in', 'href')).toBe('/api/auth/oauth/github?return_to=%2Fdashboard');
  });

  test('a 429 from the API is shown with its wait in words: rate limited, and account locked', async () => {
    // The page's side of the documented 429 contract (code + Retry-After), whatever sends it.
    const page = await openPage();
    const answers = [
      { retryAfter: '840', body: { error: 'rate_limited', message: 'Too many requests.' } },
      { retryAfter: '900', body: { error: 'account_locked', message: 'Locked.' } },
      { retryAfter: '45', body: { error: 'rate_limited', message: 'Too many requests.' } },
    ];
    await page.route('**/api/auth/login', (route) => {
      const answer = answers.shift()!;
      return route.fulfill({
        status: 429,
        headers: { 'content-type': 'application/json', 'retry-after': answer.retryAfter },
        body: JSON.stringify(answer.body),
      });
    });
    await page.goto('/login');
    await page.fill('#email', 'someone@example.com');
    await page.fill('#password', PASSWORD);
    await page.click('button[type="submit"]');
    expect(await waitForMessage(page, /Try again/)).toBe('Too many attempts. Try again in 14 minutes.');
    await screenshots(page, 'login-rate-limited');
    await page.click('button[type="submit"]');
    expect(await waitForMessage(page, /locked/)).toBe('This account is locked for now after too many failed sign-in attempts. Try again in 15 minutes.');
    await page.click('button[type="submit"]');
    expect(await waitForMessage(page, /seconds/)).toBe('Too many attempts. Try again in 45 seconds.');
    expect(page.url()).toMatch(/\/login$/);
  });

  test('a locked account shows the lock and when to try again', async (ctx) => {
    // Feature probe, from another client address: five wrong passwords, then the right one.
    const probeEmail = uniqueEmail('lock-probe');
    await createAccount(probeEmail);
    const login = (password: string): Promise<Response> =>
      fetch(`${suite.baseUrl}/api/auth/login`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-forwarded-for': '198.51.100.23' },
        body: JSON.stringify({ email: probeEmail, password }),
      });
    for (let i = 0; i < 5; i++) await login('Wrong-Password-1');
    if ((await login(PASSWORD)).status !== 429) {
      const reason = 'the login lock is not on this branch: the right password still signs in after 5 wrong ones (it arrives with the rate-limits branch)';
      console.warn(`Lock test skipped: ${reason}.`);
      ctx.skip(reason);
    }

    const email = uniqueEmail('locked');
    await createAccount(email);
    const page = await openPage();
    await page.goto('/login');
    await signIn(page, email, 'Wrong-Password-1');
    expect(await waitForMessage(page, /not correct/)).toBe('The email address or password is not correct.');
    for (let i = 0; i < 4; i++) {
      await page.evaluate(() => (document.getElementById('message')!.textContent = ''));
      await page.click('button[type="submit"]');
      await messageText(page);
    }
    await page.evaluate(() => (document.getElementById('message')!.textContent = ''));
    await page.fill('#password', PASSWORD);
    await page.click('button[type="submit"]');
    const text = await waitForMessage(page, /Try again in/);
    expect(text).toMatch(/^(This account is locked for now after too many failed sign-in attempts|Too many attempts)\. Try again in 1[45] minutes\.$/);
    expect(page.url()).toMatch(/\/login$/);
    await screenshots(page, 'login-locked');
  });

  test('"Sign in with GitHub": the provider flow with state and PKCE, back to the dashboard as the GitHub user', async () => {
    github.setUser({ id: 777_001, login: 'octo-e2e', emails: [{ email: 'octo-e2e@example.com', primary: true, verified: true }] });
    github.defaultLogin = 'octo-e2e';
    const page = await openPage();
    await page.goto('/login');
    await page.click('#github-sign-in');
    await page.waitForURL(/\/dashboard$/);
    await expect.poll(() => page.textContent('main')).toContain('octo-e2e@example.com');
    const authorize = github.requests.filter((request) => request.path === '/login/oauth/authorize').at(-1)!;
    expect(authorize).toBeDefined();
    const exchange = github.requests.filter((request) => request.path === '/login/oauth/access_token').at(-1)!;
    expect(exchange.body).toContain('code_verifier=');
    await screenshots(page, 'dashboard-github');
  });

  /**
   * A signed-in browser on a front end's page: the session cookie (host-only, SameSite=Lax) is
   * sent to Gatehouse from another port of the same host, so only the origin rules stand between
   * that page and the account.
   */
  async function frontEndPage(origin: string): Promise<{ page: Page; email: string }> {
    const context = await suite.browser.newContext({ baseURL: suite.baseUrl, viewport: DESKTOP });
    suite.closeAfterTest(context);
    const page = await context.newPage();
    const email = uniqueEmail('front');
    expect((await page.request.post('/api/auth/register', { data: { email, password: PASSWORD } })).status()).toBe(201);
    await page.goto(origin);
    return { page, email };
  }

  /** What the page's own script sees of a fetch to Gatehouse with credentials. */
  function fetchFromPage(page: Page, url: string, init: { method: string; json?: unknown }) {
    return page.evaluate(
      async ({ url, init }) => {
        try {
          const response = await fetch(url, {
            method: init.method,
            credentials: 'include',
            ...(init.json === undefined ? {} : { headers: { 'content-type': 'application/json' }, body: JSON.stringify(init.json) }),
          });
          return { status: response.status, body: await response.json() };
        } catch (error) {
          return { failed: String(error) };
        }
      },
      { url, init },
    );
  }

  test('cross-origin: a page on an origin that is not trusted can neither sign the user out nor read the session; a trusted front end can', async () => {
    const foreign = await frontEndPage(foreignFrontEnd.origin);
    // A bodyless POST is a "simple" request: the browser sends it without a preflight, with the
    // page's Origin, and Gatehouse refuses it before doing anything.
    const logout = await fetchFromPage(foreign.page, `${suite.baseUrl}/api/auth/logout`, { method: 'POST' });
    expect(logout).toHaveProperty('failed');
    const read = await fetchFromPage(foreign.page, `${suite.baseUrl}/api/auth/session`, { method: 'GET' });
    expect(read).toHaveProperty('failed');
    // A JSON POST needs a preflight, which is refused.
    const login = await fetchFromPage(foreign.page, `${suite.baseUrl}/api/auth/login`, { method: 'POST', json: { email: foreign.email, password: PASSWORD } });
    expect(login).toHaveProperty('failed');
    // An HTML form posted from that page (a navigation, no CORS at all) is refused too.
    await foreign.page.evaluate((action) => {
      const form = document.createElement('form');
      form.method = 'POST';
      form.action = action;
      document.body.append(form);
      form.submit();
    }, `${suite.baseUrl}/api/auth/logout`);
    await foreign.page.waitForURL(`${suite.baseUrl}/api/auth/logout`);
    expect(JSON.parse((await foreign.page.textContent('body')) ?? '')).toMatchObject({ error: 'forbidden_origin' });
    const still = await foreign.page.request.get('/api/auth/session');
    expect(still.status(), 'the session survived every attempt').toBe(200);

    const trusted = await frontEndPage(trustedFrontEnd.origin);
    const session = await fetchFromPage(trusted.page, `${suite.baseUrl}/api/auth/session`, { method: 'GET' });
    expect(session).toMatchObject({ status: 200, body: { user: { email: trusted.email } } });
    // (Not a login: earlier tests locked this browser's address with wrong passwords.)
    const resent = await fetchFromPage(trusted.page, `${suite.baseUrl}/api/auth/resend-verification`, { method: 'POST', json: {} });
    expect(resent).toMatchObject({ status: 200 });
    const signedOut = await fetchFromPage(trusted.page, `${suite.baseUrl}/api/auth/logout`, { method: 'POST' });
    expect(signedOut).toEqual({ status: 200, body: { ok: true } });
    expect((await trusted.page.request.get('/api/auth/session')).status()).toBe(401);
  });

  test('pre-hijacking, the victim\'s click: "I did not create this account" on the verification page deletes the squatted account', async () => {
    // The attacker registers the victim's address, from outside the victim's browser.
    const email = uniqueEmail('squatted');
    const squat = await fetch(`${suite.baseUrl}/api/auth/register`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email, password: 'Squatter-Pass-42' }),
    });
    expect(squat.status).toBe(201);
    const { verificationUrl } = (await squat.json()) as { verificationUrl: string };
    const attackerCookie = squat.headers.getSetCookie()[0]!.split(';')[0]!;

    // The victim opens the link from the email and declines.
    const page = await openPage();
    await page.goto(verificationUrl);
    await screenshots(page, 'verify-email-decline');
    // Deleting asks first: the button that deletes shows only once the person says it was not them.
    expect(await page.locator('#decline-form button').isVisible()).toBe(false);
    await page.click('#decline summary');
    expect(await page.locator('#decline-form button').textContent()).toBe('Yes, delete this account');
    await page.click('#decline-form button');
    expect(await waitForMessage(page, /deleted/)).toBe(
      'The account registered with your email address has been deleted. Nothing more will be sent to you about it.',
    );
    expect(await page.locator('form:visible').count()).toBe(0);

    // The attacker is signed out and cannot sign in; the victim can register the address.
    expect((await fetch(`${suite.baseUrl}/api/auth/session`, { headers: { cookie: attackerCookie } })).status).toBe(401);
    const attackerLogin = await fetch(`${suite.baseUrl}/api/auth/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-forwarded-for': '198.51.100.31' },
      body: JSON.stringify({ email, password: 'Squatter-Pass-42' }),
    });
    expect(attackerLogin.status).toBe(401);
    await createAccount(email);
  });
});

/**
 * "Sign in with <provider>" for an OpenID Connect provider, through the login page in Chromium:
 * a real OpenID Provider on loopback (oidc-provider 8, support/oidc-provider.ts) with its own
 * keys, and the built server configured with OIDC_PROVIDERS only (no GitHub).
 */
describe.skipIf(!hasBrowser)('OpenID Connect sign-in in Chromium', { timeout: 60_000 }, () => {
  let provider: RealOidcProvider;
  afterAll(async () => {
    await provider?.close();
  });
  const suite = useBrowserSuite({
    name: 'oidc',
    env: async (baseUrl) => {
      provider = await startOidcProvider({ redirectUris: [`${baseUrl}/api/auth/callback/acme`] });
      return {
        AUTH_SECRET: randomBytes(24).toString('base64url'),
        ENCRYPTION_KEY_BASE64: randomBytes(32).toString('base64'),
        OIDC_PROVIDERS: 'acme',
        OIDC_ACME_ISSUER: provider.issuer,
        OIDC_ACME_CLIENT_ID: provider.clientId,
        OIDC_ACME_CLIENT_SECRET: provider.clientSecret,
        OIDC_ACME_NAME: 'Acme SSO',
        OIDC_ACME_TRUST_EMAIL: 'true',
      };
    },
  });
  const problems: string[] = [];

  test('the login page offers "Sign in with Acme SSO"; the round trip through the provider ends on the dashboard', async () => {
    const context = await suite.browser.newContext({ baseURL: suite.baseUrl, viewport: DESKTOP });
    const page = await context.newPage();
    page.on('pageerror', (error) => problems.push(`page error: ${error.message}`));
    page.on('console', (message) => {
      if (message.type() === 'error') problems.push(`console: ${message.text()}`);
    });
    try {
      const email = uniqueEmail('oidc');
      provider.nextAccount = { sub: `e2e-${randomBytes(4).toString('hex')}`, email, email_verified: true, preferred_username: 'e2e' };
      await page.goto('/login?return_to=%2Fdashboard');
      const button = page.locator('#acme-sign-in');
      expect(await button.textContent()).toBe('Sign in with Acme SSO');
      expect(await button.getAttribute('href')).toBe('/api/auth/oauth/acme?return_to=%2Fdashboard');
      expect(await page.locator('#github-sign-in').count()).toBe(0);
      await page.screenshot({ path: path.join(SCREENSHOTS, 'login-oidc-desktop.png'), fullPage: true });

      const before = provider.requests.length;
      await button.click();
      await page.waitForURL(/\/dashboard$/);
      await expect.poll(() => page.textContent('main')).toContain(email);
      // The browser went to the provider's authorization endpoint; the server exchanged the code,
      // fetched the keys and read the email from userinfo.
      expect(provider.requests.slice(before)).toEqual(expect.arrayContaining(['/auth', '/token', '/jwks', '/me']));
      await page.screenshot({ path: path.join(SCREENSHOTS, 'dashboard-oidc-desktop.png'), fullPage: true });
      expect(problems, 'console errors, CSP violations or script errors').toEqual([]);
    } finally {
      await context.close();
    }
  });
});
