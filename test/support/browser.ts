/**
 * What every browser suite shares: Debian's Chromium driven by playwright-core, the built server
 * started in development mode on a SQLite file in a throwaway folder, pages whose console errors
 * and script errors fail the test that opened them, and the page's message area.
 *
 * Without /usr/bin/chromium the suites are skipped with a warning, unless REQUIRE_BROWSER=1 (CI),
 * which makes a missing browser an error.
 */
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, expect } from 'vitest';
import { freePort } from './free-port.js';
import { startServerProcess, type ServerProcess } from './server-process.js';

const CHROMIUM = '/usr/bin/chromium';
/** Without the background-networking flags Chromium reaches for Google's hosts, which this closed network refuses. */
const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-quic',
  '--no-first-run',
  '--disable-component-update',
  '--disable-sync',
];
export const SCREENSHOTS = path.resolve('test-results/screenshots');
/** The password of the suites' accounts: strong enough for the rules, never a real one. */
export const E2E_PASSWORD = 'Correct-Horse-9';

export const hasBrowser = fs.existsSync(CHROMIUM);
if (!hasBrowser) {
  const message = `Browser suites skipped: ${CHROMIUM} not found (apt-get install chromium to run them).`;
  if (process.env.REQUIRE_BROWSER === '1') throw new Error(`${message} REQUIRE_BROWSER=1 forbids skipping.`);
  console.warn(message);
}

export interface BrowserSuiteOptions {
  /** Names the throwaway data folder (`gatehouse-e2e-<name>-…`). */
  name: string;
  /**
   * Variables beyond the suite's own (development mode, the SQLite file, a JWT secret, bcrypt cost
   * 4, PORT and BASE_URL). Called when the suite starts, after the describe's earlier beforeAll
   * hooks, so it may use what they started; or it starts what needs BASE_URL itself (a provider
   * that redirects back to it).
   */
  env?: (baseUrl: string) => Record<string, string> | Promise<Record<string, string>>;
  /** `localhost` where WebAuthn needs a host name (it refuses IP addresses); else 127.0.0.1. */
  host?: 'localhost' | '127.0.0.1';
  /** false: the server's default mode (production unless NODE_ENV says otherwise). */
  developmentMode?: boolean;
}

export interface BrowserSuite {
  readonly browser: Browser;
  readonly server: ServerProcess;
  /** BASE_URL: the origin the pages are opened at, chosen before the server starts. */
  readonly baseUrl: string;
  /** A fresh browser profile (no cookies) at desktop size, closed after the test. */
  openPage(viewport?: { width: number; height: number }): Promise<Page>;
  /** Closes `context` after the test, as openPage's own. */
  closeAfterTest(context: BrowserContext): void;
  /** Waits until the message area shows text matching `pattern`, and returns it. */
  waitForMessage(page: Page, pattern: RegExp, options?: { timeout?: number }): Promise<string>;
}

/**
 * Registers the suite's hooks in the calling `describe`: the server and Chromium start before its
 * tests and stop after them; after each test its pages are closed and the test fails if any of
 * them logged an error (a CSP violation, a script error). A fetch that answers 4xx is logged by
 * Chromium as "Failed to load resource": that is the API doing its job, not a problem.
 */
export function useBrowserSuite(options: BrowserSuiteOptions): BrowserSuite {
  let browser: Browser | undefined;
  let server: ServerProcess | undefined;
  let dataDir: string | undefined;
  let baseUrl: string | undefined;
  const contexts: BrowserContext[] = [];
  let problems: string[] = [];

  beforeAll(async () => {
    const port = await freePort();
    baseUrl = `http://${options.host ?? '127.0.0.1'}:${port}`;
    const extraEnv = await options.env?.(baseUrl);
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), `gatehouse-e2e-${options.name}-`));
    server = await startServerProcess({
      cwd: dataDir,
      env: {
        ...(options.developmentMode === false ? {} : { NODE_ENV: 'development' }),
        DATABASE_URL: `sqlite:${path.join(dataDir, 'e2e.db')}`,
        JWT_SECRET: randomBytes(32).toString('base64url'),
        BCRYPT_ROUNDS: '4',
        PORT: String(port),
        BASE_URL: baseUrl,
        ...extraEnv,
      },
    });
    browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
    fs.mkdirSync(SCREENSHOTS, { recursive: true });
  });

  afterAll(async () => {
    await browser?.close();
    await server?.stop();
    if (dataDir !== undefined) fs.rmSync(dataDir, { recursive: true, force: true });
  });

  afterEach(async () => {
    for (const context of contexts.splice(0)) await context.close();
    const found = problems;
    problems = [];
    expect(found, 'console errors, CSP violations or script errors').toEqual([]);
  });

  const started = <T>(value: T | undefined, what: string): T => {
    if (value === undefined) throw new Error(`the browser suite has not started: no ${what} yet (use it inside a test)`);
    return value;
  };

  return {
    get browser() {
      return started(browser, 'browser');
    },
    get server() {
      return started(server, 'server');
    },
    get baseUrl() {
      return started(baseUrl, 'BASE_URL');
    },
    async openPage(viewport = { width: 1280, height: 900 }) {
      const context = await started(browser, 'browser').newContext({ baseURL: started(baseUrl, 'BASE_URL'), viewport });
      contexts.push(context);
      const page = await context.newPage();
      page.on('pageerror', (error) => problems.push(`page error: ${error.message}`));
      page.on('console', (message) => {
        if (message.type() === 'error' && !/Failed to load resource: the server responded with a status of 4\d\d/.test(message.text())) {
          problems.push(`console: ${message.text()}`);
        }
      });
      return page;
    },
    closeAfterTest(context) {
      contexts.push(context);
    },
    async waitForMessage(page, pattern, waitOptions = {}) {
      await page
        .waitForFunction((source) => new RegExp(source).test(document.getElementById('message')?.textContent ?? ''), pattern.source, waitOptions)
        .catch(async (error: Error) => {
          throw new Error(`${error.message}; the message says: ${await page.locator('#message').textContent()}; problems: ${problems.join(' | ')}`);
        });
      return (await page.locator('#message').textContent())!.trim();
    },
  };
}
