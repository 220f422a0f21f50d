/**
 * /account and /confirm-email-change end to end in a real headless Chromium (Debian's
 * /usr/bin/chromium, driven by playwright-core) against the real built server in development
 * mode. Skipped without /usr/bin/chromium, unless REQUIRE_BROWSER=1 (CI), as browser.test.ts.
 */
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, test } from 'vitest';
import { freePort } from './support/free-port.js';
import { startServerProcess, type ServerProcess } from './support/server-process.js';
import { totp } from './support/totp-oracle.js';

const CHROMIUM = '/usr/bin/chromium';
const CHROMIUM_ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--no-first-run', '--disable-sync'];
const PASSWORD = 'Correct-Horse-9';
const SCREENSHOTS = path.resolve('test-results/screenshots');

const hasBrowser = fs.existsSync(CHROMIUM);
if (!hasBrowser && process.env.REQUIRE_BROWSER === '1') throw new Error(`${CHROMIUM} not found; REQUIRE_BROWSER=1 forbids skipping.`);
if (!hasBrowser) console.warn(`Browser suites skipped: ${CHROMIUM} not found (apt-get install chromium to run them).`);

describe.skipIf(!hasBrowser)('the account page in Chromium', { timeout: 60_000 }, () => {
  let browser: Browser;
  let server: ServerProcess;
  let dataDir: string;
  const contexts: BrowserContext[] = [];
  let problems: string[] = [];

  beforeAll(async () => {
    const port = await freePort();
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'gatehouse-e2e-account-'));
    server = await startServerProcess({
      cwd: dataDir,
      env: {
        NODE_ENV: 'development',
        DATABASE_URL: `sqlite:${path.join(dataDir, 'e2e.db')}`,
        JWT_SECRET: randomBytes(32).toString('base64url'),
        BCRYPT_ROUNDS: '4',
        RATE_LIMIT_REGISTER: '1000/15m',
        RATE_LIMIT_LOGIN: '1000/15m',
        RATE_LIMIT_EMAIL_CHANGE: '1000/1h',
        RATE_LIMIT_MFA_VERIFY: '1000/15m',
        ENCRYPTION_KEY_BASE64: randomBytes(32).toString('base64'),
        PORT: String(port),
        BASE_URL: `http://127.0.0.1:${port}`,
      },
    });
    browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
    fs.mkdirSync(SCREENSHOTS, { recursive: true });
  });

  afterAll(async () => {
    await browser?.close();
    await server?.stop();
    if (dataDir) fs.rmSync(dataDir, { recursive: true, force: true });
  });

  afterEach(async () => {
    for (const context of contexts.splice(0)) await context.close();
    const found = problems;
    problems = [];
    expect(found, 'console errors, CSP violations or script errors').toEqual([]);
  });

  async function openPage(): Promise<Page> {
    const context = await browser.newContext({ baseURL: server.url, viewport: { width: 1280, height: 900 } });
    contexts.push(context);
    const page = await context.newPage();
    page.on('pageerror', (error) => problems.push(`page error: ${error.message}`));
    page.on('console', (message) => {
      if (message.type() === 'error' && !/Failed to load resource: the server responded with a status of 4\d\d/.test(message.text())) {
        problems.push(`console: ${message.text()}`);
      }
    });
    return page;
  }

  async function waitForMessage(page: Page, pattern: RegExp): Promise<string> {
    await page.waitForFunction((source) => new RegExp(source).test(document.getElementById('message')?.textContent ?? ''), pattern.source);
    return (await page.locator('#message').textContent())!.trim();
  }

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
    const response = await fetch(`${server.url}/api/auth/register`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email, password: PASSWORD }),
    });
    expect(response.status).toBe(201);
    const { verificationToken } = (await response.json()) as { verificationToken: string };
    const verified = await fetch(`${server.url}/api/auth/verify-email`, {
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
    expect(await page.locator('#session-list li').count()).toBe(3); // register (API), the other browser, this one
    expect(await page.locator('#session-list li.item--current strong').textContent()).toMatch(/^This browser — .*Chrome/);
    await page.screenshot({ path: path.join(SCREENSHOTS, 'account-desktop.png'), fullPage: true });
    await page.click('#revoke-others');
    expect(await waitForMessage(page, /Signed out/)).toBe('Signed out 2 other sessions.');
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
    // Signed out from elsewhere: every session of the account ends (a password reset would too).
    const cookies = await page.context().cookies();
    const session = cookies.find((cookie) => cookie.name === 'gatehouse_session')!;
    await fetch(`${server.url}/api/auth/logout`, { method: 'POST', headers: { cookie: `${session.name}=${session.value}` } });
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
    const login = await fetch(`${server.url}/api/auth/login`, {
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
