/**
 * /docs, the API reference, in a real headless Chromium (Debian's /usr/bin/chromium, driven by
 * playwright-core) against the real built server: Swagger UI renders /api/openapi.json from
 * /assets, with no CSP violation and nothing fetched from another origin. Skipped without
 * /usr/bin/chromium, unless REQUIRE_BROWSER=1 (CI): support/browser.ts.
 */
import path from 'node:path';
import { describe, expect, test } from 'vitest';
import { SCREENSHOTS, hasBrowser, useBrowserSuite } from './support/browser.js';

describe.skipIf(!hasBrowser)('the API reference (/docs) in Chromium', { timeout: 60_000 }, () => {
  const suite = useBrowserSuite({ name: 'docs', developmentMode: false });

  test('renders every endpoint from /api/openapi.json, all from this origin, with no CSP violation', async () => {
    const context = await suite.browser.newContext({ baseURL: suite.baseUrl, viewport: { width: 1280, height: 900 } });
    const page = await context.newPage();
    const problems: string[] = [];
    const requested: string[] = [];
    page.on('pageerror', (error) => problems.push(`page error: ${error.message}`));
    page.on('console', (message) => {
      // Failed loads are judged by their answers (above); everything else the console reports counts.
      if (/Failed to load resource: the server responded with a status of 404/.test(message.text())) return;
      if (message.type() === 'error' || /Content Security Policy/i.test(message.text())) problems.push(`console ${message.type()}: ${message.text()}`);
    });
    page.on('request', (request) => requested.push(request.url()));
    page.on('response', (answer) => {
      // The browser asks for /favicon.ico by itself; there is none (404), as on every page.
      if (answer.status() >= 400 && !answer.url().endsWith('/favicon.ico')) problems.push(`${answer.status()} ${answer.url()}`);
    });

    const response = await page.goto('/docs');
    expect(response?.status()).toBe(200);
    const csp = response?.headers()['content-security-policy'] ?? '';
    expect(csp).toContain("script-src 'self';");
    expect(csp).not.toContain("'unsafe-eval'");

    // Swagger UI lists each operation as a block with its method and path.
    await page.waitForSelector('.opblock', { timeout: 20_000 });
    await expect.poll(() => page.locator('.opblock').count()).toBeGreaterThan(45);
    const paths = await page.locator('.opblock-summary-path').allTextContents();
    const normalised = paths.map((text) => text.replace(/\u200b/g, '').trim());
    for (const expected of ['/api/auth/login', '/api/auth/session', '/api/auth/sessions/{id}', '/metrics', '/api/openapi.json'])
      expect(normalised).toContain(expected);

    // Expanding an operation shows its request body schema, rendered without a violation either.
    await page.locator('#operations-Password-postApiAuthLogin .opblock-summary').click();
    await page.waitForSelector('#operations-Password-postApiAuthLogin .opblock-body', { timeout: 10_000 });
    await page.screenshot({ path: path.join(SCREENSHOTS, 'docs.png'), fullPage: false });

    // "Try it out" calls the API from the page (connect-src 'self') and shows the answer.
    const healthz = page.locator('#operations-Operations-getHealthz');
    await healthz.locator('.opblock-summary').click();
    await healthz.locator('button.try-out__btn').click();
    await healthz.locator('button.execute').click();
    await expect.poll(() => healthz.locator('.live-responses-table tbody .response-col_status').first().textContent(), { timeout: 10_000 }).toContain('200');

    const origin = new URL(suite.baseUrl).origin;
    expect(requested.filter((url) => !url.startsWith(origin) && !url.startsWith('data:'))).toEqual([]);
    expect(requested).toContain(`${origin}/assets/swagger-ui/swagger-ui-bundle.js`);
    expect(requested).toContain(`${origin}/api/openapi.json`);
    expect(problems).toEqual([]);
    await context.close();
  });
});
