/**
 * The pages' layout fixes in a real headless Chromium against the built server: no empty band
 * under the heading, the language switcher's footer laid out from the start side in every
 * direction. Skipped without /usr/bin/chromium, unless REQUIRE_BROWSER=1 (CI): support/browser.ts.
 */
import { randomBytes } from 'node:crypto';
import { describe, expect, test } from 'vitest';
import { E2E_PASSWORD, hasBrowser, useBrowserSuite } from './support/browser.js';

/** The size the fixes are asked for at. */
const DESKTOP = { width: 1200, height: 900 };

describe.skipIf(!hasBrowser)('page layout fixes in Chromium', { timeout: 60_000 }, () => {
  const suite = useBrowserSuite({
    name: 'page-fixes',
    env: () => ({ RATE_LIMIT_LOGIN: '1000/15m', RATE_LIMIT_REGISTER: '1000/15m', RATE_LIMIT_EMAIL_SIGN_IN: '1000/15m' }),
  });
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

  test('/login: one email field for the password, the email link and its code; the register link above the fold', async () => {
    const page = await openPage(DESKTOP);
    await page.goto('/login');
    const visibleEmailFields = await page.locator('main input[type="email"]:visible').count();
    expect(visibleEmailFields).toBe(1);
    const register = (await page.locator('a[href="/register"]').boundingBox())!;
    expect(register.y + register.height).toBeLessThan(DESKTOP.height);
    // The link is asked for with the address typed above; a missing one is said before anything is sent.
    await page.click('#email-link-form button[type="submit"]');
    expect(await waitForMessage(page, /email/)).toBe('Enter your email address.');
    expect(await page.evaluate(() => document.activeElement?.id)).toBe('email');
    expect(await page.locator('#email-code').isVisible()).toBe(false);
    const email = `one-field-${randomBytes(4).toString('hex')}@example.com`;
    await page.fill('#email', email);
    const [answer] = await Promise.all([page.waitForResponse('**/api/auth/email-sign-in/request'), page.click('#email-link-form button[type="submit"]')]);
    expect(JSON.parse(answer.request().postData() ?? '{}')).toMatchObject({ email });
    // The code's step unfolds, still without a second email field.
    await page.waitForSelector('#email-code:visible');
    expect(await page.locator('main input[type="email"]:visible').count()).toBe(1);
  });

  test('a common password: the server refuses it and the page says why beside the field, in the page language', async () => {
    const page = await openPage(DESKTOP);
    for (const [lang, words] of [
      ['en', /too common/],
      ['de', /zu verbreitet/],
    ] as const) {
      await page.goto(`/register?lang=${lang}`);
      await page.fill('#email', `common-${randomBytes(4).toString('hex')}@example.com`);
      // Meets every listed rule, yet is on the list: only the server can tell.
      await page.fill('#password', 'Password123!');
      expect(await page.locator('#password-rules .rule--met').count()).toBe(5);
      expect(await page.locator('#password-problem').isVisible()).toBe(false);
      await page.click('button[type="submit"]');
      await page.waitForSelector('#password-problem:visible');
      expect(await page.locator('#password-problem').textContent()).toMatch(words);
      expect(await page.getAttribute('#password', 'aria-invalid')).toBe('true');
      expect(await page.getAttribute('#password', 'aria-describedby')).toContain('password-problem');
      // Beside the field: between the password input and the rules.
      const input = (await page.locator('#password').boundingBox())!;
      const problem = (await page.locator('#password-problem').boundingBox())!;
      expect(problem.y).toBeGreaterThanOrEqual(input.y + input.height);
      expect(problem.y - (input.y + input.height)).toBeLessThan(24);
      // Typing again takes it away.
      await page.locator('#password').pressSequentially('x');
      expect(await page.locator('#password-problem').isVisible()).toBe(false);
    }
  });

  test('/account names each session "Chrome on Linux", in the page language, never the raw user-agent string', async () => {
    const email = `device-${randomBytes(4).toString('hex')}@example.com`;
    const registered = await fetch(`${suite.baseUrl}/api/auth/register`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'user-agent': 'curl/8.5.0' },
      body: JSON.stringify({ email, password: E2E_PASSWORD }),
    });
    expect(registered.status).toBe(201);
    const page = await openPage(DESKTOP);
    const agent = await page.evaluate(() => navigator.userAgent);
    await page.goto('/login?return_to=%2Faccount');
    await page.fill('#email', email);
    await page.fill('#password', E2E_PASSWORD);
    await page.click('#first-factor button[type="submit"]');
    await page.waitForURL('**/account');
    await page.waitForSelector('#session-list .item--current');
    const current = (await page.locator('#session-list .item--current').textContent())!;
    expect(current).toContain('This browser — Chrome on Linux');
    expect(current).not.toContain(agent);
    // The session the API registration opened named no browser.
    expect(await page.locator('#session-list').textContent()).toContain('An unknown browser');
    await page.goto('/account?lang=de');
    await page.waitForSelector('#session-list .item--current');
    expect(await page.locator('#session-list .item--current').textContent()).toContain('Chrome unter Linux');

    // The password change says a common password's refusal beside its field too.
    await page.fill('#password-current', E2E_PASSWORD);
    await page.fill('#new-password', 'Password123!');
    await page.click('#password-form button[type="submit"]');
    await page.waitForSelector('#password-form #password-problem:visible');
    expect(await page.locator('#password-problem').textContent()).toMatch(/zu verbreitet/);
    expect(await page.getAttribute('#new-password', 'aria-invalid')).toBe('true');
  });

  test('an address with no page: the 404 page, in the layout and the language', async () => {
    const page = await openPage(DESKTOP);
    const response = await page.goto('/no-such-page?lang=fr');
    expect(response!.status()).toBe(404);
    expect(await page.locator('h1').textContent()).toBe('Page introuvable');
    expect(await page.getAttribute('html', 'lang')).toBe('fr');
    expect(await page.locator('.language-switcher li').count()).toBe(6);
  });
});
