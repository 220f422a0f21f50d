/**
 * The brand in a real headless Chromium against the real built server: a script inside an SVG
 * logo never runs when its URL is opened on its own (the same bytes without the logo's
 * Content-Security-Policy do run it: the control), and the stylesheet made from BRAND_COLOR
 * recolours /login's primary button and header over the pages' own stylesheet (a server without
 * the brand is the control), and the logo shows in the header. Skipped without
 * /usr/bin/chromium, unless REQUIRE_BROWSER=1 (CI): support/browser.ts.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, describe, expect, test } from 'vitest';
import { brandAssets } from '../src/brand/brand.js';
import { loadConfig } from '../src/config.js';
import { hasBrowser, useBrowserSuite } from './support/browser.js';
import { TEST_JWT_SECRET } from './support/harness.js';

const SVG = `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 120 40"><script>document.title = 'ran'; fetch('/ran-' + document.domain)</script><rect width="120" height="40" fill="#17612f"/></svg>\n`;
const BRAND_COLOR = '#17612f';

describe.skipIf(!hasBrowser)('the brand in Chromium', { timeout: 60_000 }, () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gatehouse-brand-e2e-'));
  const brandEnv = { BRAND_LOGO_FILE: path.join(dir, 'logo.svg'), BRAND_COLOR };
  fs.writeFileSync(brandEnv.BRAND_LOGO_FILE, SVG);
  // The URLs the server serves: the same files give the same hashes.
  const assets = brandAssets(loadConfig({ JWT_SECRET: TEST_JWT_SECRET, ...brandEnv }).brand);
  const suite = useBrowserSuite({ name: 'brand', developmentMode: false, env: () => ({ ...brandEnv, APP_NAME: 'Acme' }) });
  // The same server without the brand: the control for the colours.
  const plain = useBrowserSuite({ name: 'brand-plain', developmentMode: false });
  afterAll(() => {
    fs.rmSync(dir, { recursive: true, force: true });
  });

  /** A page of its own (outside the suite's console check: a blocked script is reported there, as it should be). */
  async function openPage(): Promise<{ page: Page; requested: string[] }> {
    const context = await suite.browser.newContext({ baseURL: suite.baseUrl });
    suite.closeAfterTest(context);
    const page = await context.newPage();
    const requested: string[] = [];
    page.on('request', (request) => requested.push(new URL(request.url()).pathname));
    return { page, requested };
  }

  test('the SVG logo opened at its own URL runs none of its script; without its policy it would', async () => {
    const logo = assets.logo!.path;
    const { page, requested } = await openPage();
    const answer = await page.goto(logo);
    expect(answer?.status()).toBe(200);
    expect(answer?.headers()['content-security-policy']).toBe("default-src 'none'; style-src 'unsafe-inline'; sandbox");
    expect(await page.evaluate(() => document.title)).toBe('');
    expect(requested.filter((each) => each.startsWith('/ran'))).toEqual([]);

    // The control: the very bytes, answered without the logo's policy, run the script.
    const control = await openPage();
    await control.page.route(`**${logo}`, (route) => route.fulfill({ status: 200, contentType: 'image/svg+xml', body: SVG }));
    await control.page.goto(logo);
    await control.page.waitForFunction(() => document.title === 'ran');
  });

  test('on /login, BRAND_COLOR recolours the primary button and the header over the pages’ own stylesheet', async () => {
    const { page } = await openPage();
    await page.goto('/login');
    const styles = await page.evaluate(() => {
      const style = (selector: string) => getComputedStyle(document.querySelector(selector)!);
      return {
        primary: [style('button.primary').backgroundColor, style('button.primary').color],
        brand: style('.site-header .brand').color,
        header: style('.site-header').borderBottomColor,
      };
    });
    const green = 'rgb(23, 97, 47)';
    expect(styles).toEqual({ primary: [green, 'rgb(255, 255, 255)'], brand: green, header: green });

    // The control: the same page of a server without the brand keeps the pages' own colour.
    const control = await openPage();
    await control.page.goto(`${plain.baseUrl}/login`);
    const unbranded = await control.page.evaluate(() => getComputedStyle(document.querySelector('button.primary')!).backgroundColor);
    expect(unbranded).not.toBe(green);
  });

  test('the logo shows in the header, named by APP_NAME, instead of the name as text', async () => {
    const { page } = await openPage();
    await page.goto('/login');
    const logo = page.locator('.site-header img.brand-logo');
    await expect.poll(() => logo.evaluate((img: HTMLImageElement) => img.complete && img.naturalWidth > 0)).toBe(true);
    expect(await logo.getAttribute('src')).toBe(assets.logo!.path);
    expect(await logo.getAttribute('alt')).toBe('Acme');
    expect(await page.locator('.site-header').innerText()).toBe('');
    const box = await logo.boundingBox();
    expect(box?.height).toBe(40);
    expect(box?.width).toBe(120);
  });
});
