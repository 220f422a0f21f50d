/**
 * Sign-in by email (DESIGN §9.9) end to end in a real headless Chromium (Debian's
 * /usr/bin/chromium, driven by playwright-core) against the real built server in development
 * mode: the link through /email-sign-in and its Confirm button, and the code on /login.
 * Skipped without /usr/bin/chromium, unless REQUIRE_BROWSER=1 (CI), as browser.test.ts.
 */
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, test } from 'vitest';
import { freePort } from './support/free-port.js';
import { startServerProcess, type ServerProcess } from './support/server-process.js';

const CHROMIUM = '/usr/bin/chromium';
const CHROMIUM_ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--no-first-run', '--disable-sync'];
const PASSWORD = 'Correct-Horse-9';

const hasBrowser = fs.existsSync(CHROMIUM);
if (!hasBrowser && process.env.REQUIRE_BROWSER === '1') throw new Error(`${CHROMIUM} not found; REQUIRE_BROWSER=1 forbids skipping.`);
if (!hasBrowser) console.warn(`Browser suites skipped: ${CHROMIUM} not found (apt-get install chromium to run them).`);

describe.skipIf(!hasBrowser)('sign-in by email in Chromium', { timeout: 60_000 }, () => {
  let browser: Browser;
  let server: ServerProcess;
  let dataDir: string;
  const contexts: BrowserContext[] = [];
  let problems: string[] = [];

  beforeAll(async () => {
    const port = await freePort();
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'gatehouse-e2e-email-sign-in-'));
    server = await startServerProcess({
      cwd: dataDir,
      env: {
        NODE_ENV: 'development',
        DATABASE_URL: `sqlite:${path.join(dataDir, 'e2e.db')}`,
        JWT_SECRET: randomBytes(32).toString('base64url'),
        BCRYPT_ROUNDS: '4',
        RATE_LIMIT_REGISTER: '1000/15m',
        RATE_LIMIT_EMAIL_SIGN_IN: '1000/15m',
        RATE_LIMIT_VERIFY_EMAIL: '1000/15m',
        PORT: String(port),
        BASE_URL: `http://127.0.0.1:${port}`,
      },
    });
    browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
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

  async function newAccount(label: string): Promise<string> {
    const email = `${label}-${randomBytes(4).toString('hex')}@example.com`;
    const response = await fetch(`${server.url}/api/auth/register`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email, password: PASSWORD }),
    });
    expect(response.status).toBe(201);
    return email;
  }

  const hasSession = async (page: Page): Promise<boolean> => (await page.context().cookies()).some((cookie) => cookie.name === 'gatehouse_session');

  test('the link: "Email me a sign-in link", then /email-sign-in spends the token only on Confirm and lands signed in', async () => {
    const email = await newAccount('link');
    const page = await openPage();
    await page.goto('/login?return_to=%2Faccount');
    await page.fill('#email-link-email', email);
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
    await page.fill('#email-link-email', email);
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
