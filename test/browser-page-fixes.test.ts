/**
 * The pages' layout fixes in a real headless Chromium against the built server: no empty band
 * under the heading, the language switcher's footer laid out from the start side in every
 * direction. Skipped without /usr/bin/chromium, unless REQUIRE_BROWSER=1 (CI): support/browser.ts.
 */
import { describe, expect, test } from 'vitest';
import { hasBrowser, useBrowserSuite } from './support/browser.js';

/** The size the fixes are asked for at. */
const DESKTOP = { width: 1200, height: 900 };

describe.skipIf(!hasBrowser)('page layout fixes in Chromium', { timeout: 60_000 }, () => {
  const suite = useBrowserSuite({ name: 'page-fixes', env: () => ({ RATE_LIMIT_LOGIN: '1000/15m' }) });
  const { openPage, waitForMessage } = suite;

  // The first field (its label, then its input) starts within 24 px of the heading's bottom: the
  // heading's own margin, no reserved band. The input itself sits one label line lower.
  test('no empty band under the heading: the first field follows the h1; a message then shows between them', async () => {
    const page = await openPage(DESKTOP);
    for (const path of ['/login', '/register']) {
      await page.goto(path);
      const heading = (await page.locator('h1').boundingBox())!;
      const field = (await page.locator('main .field').first().boundingBox())!;
      const input = (await page.locator('main .field input').first().boundingBox())!;
      expect(input.y - (heading.y + heading.height), path).toBeLessThanOrEqual(48);
      expect(field.y - (heading.y + heading.height), path).toBeGreaterThanOrEqual(0);
      expect(field.y - (heading.y + heading.height), path).toBeLessThanOrEqual(24);
      // The live region is there from the start, empty and taking no room.
      expect(await page.getAttribute('#message', 'role')).toBe('alert');
      expect((await page.locator('#message').boundingBox())?.height ?? 0).toBe(0);
    }
    await page.goto('/login');
    await page.click('#first-factor button[type="submit"]');
    await waitForMessage(page, /email/);
    const heading = (await page.locator('h1').boundingBox())!;
    const message = (await page.locator('#message').boundingBox())!;
    const field = (await page.locator('#email').boundingBox())!;
    expect(message.height).toBeGreaterThan(20);
    expect(message.y).toBeGreaterThanOrEqual(heading.y + heading.height);
    expect(field.y).toBeGreaterThanOrEqual(message.y + message.height);
  });

  test('the language switcher: one centred line in the footer, from the right on an Arabic page', async () => {
    const page = await openPage(DESKTOP);
    for (const lang of ['en', 'ar']) {
      await page.goto(`/login?lang=${lang}`);
      const items = await page
        .locator('.language-switcher li')
        .evaluateAll((elements) => elements.map((element) => element.getBoundingClientRect().toJSON() as DOMRect));
      expect(items).toHaveLength(6);
      // One line, small, centred under the card.
      expect(new Set(items.map((item) => Math.round(item.y))).size).toBe(1);
      const card = (await page.locator('main').boundingBox())!;
      const left = Math.min(...items.map((item) => item.x));
      const right = Math.max(...items.map((item) => item.x + item.width));
      expect(Math.abs(left - card.x - (card.x + card.width - right))).toBeLessThanOrEqual(2);
      expect(
        await page
          .locator('.language-switcher a')
          .first()
          .evaluate((a) => getComputedStyle(a).fontSize),
      ).toBe('14px');
      // English first from the left on a left-to-right page, from the right on the Arabic one.
      const first = items[0]!;
      const last = items[items.length - 1]!;
      expect(lang === 'ar' ? first.x > last.x : first.x < last.x, lang).toBe(true);
    }
  });
});
