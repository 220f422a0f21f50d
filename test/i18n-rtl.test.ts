/**
 * @module The Arabic and Japanese pages: over HTTP, `<html lang dir>`, the titles and the scripts'
 * messages come from their own catalogs (no English left, no raw key shown); in Chromium, the
 * Arabic /login, /register and /account are laid out right to left at desktop and phone width
 * (labels at the card's right edge, the message stripe and password-rule marks on the right, no
 * horizontal scroll), with screenshots under test-results/screenshots/ to look at.
 */
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import type { Page } from 'playwright-core';
import { afterEach, beforeEach, describe, expect, test } from 'vitest';
import { CATALOGS } from '../src/i18n/catalogs/index.js';
import { translator } from '../src/i18n/translator.js';
import { E2E_PASSWORD as PASSWORD, SCREENSHOTS, hasBrowser, useBrowserSuite } from './support/browser.js';
import { createTestGatehouse, describeEachDialect, type TestGatehouse } from './support/harness.js';

/**
 * The titles written out, not looked up: a lookup falls back to English, so it would agree with a
 * page whose catalog lacks the key.
 */
const TITLES = {
  ar: { '/login': 'تسجيل الدخول', '/register': 'إنشاء حساب', '/forgot-password': 'إعادة تعيين كلمة المرور' },
  ja: { '/login': 'ログイン', '/register': 'アカウントを作成', '/forgot-password': 'パスワードの再設定' },
} as const;

const PLURAL = /_(zero|one|two|few|many|other)$/;
const PAGE_MESSAGES = /<script type="application\/json" id="page-messages">([^<]*)<\/script>/;

/** The text a reader sees: no tags, no scripts (the messages' JSON block names keys on purpose). */
function visibleText(page: string): string {
  return page
    .replace(/<script[^>]*>[^<]*<\/script>/g, ' ')
    .replace(/<[^>]+>/g, ' ')
    .replace(/&amp;/g, '&');
}

/** English messages long enough not to occur by chance, without placeholders. */
const ENGLISH_SENTENCES = Object.values(CATALOGS.en).filter((text) => text.length >= 8 && !text.includes('{{'));

test('Arabic counts take their six forms: none, singular, dual, plural to 10, singular accusative to 99, singular from 100', () => {
  const t = translator('ar');
  expect([0, 1, 2, 3, 10, 11, 99, 100].map((count) => t('email.hours', { count }))).toEqual([
    'أقل من ساعة',
    'ساعة واحدة',
    'ساعتين',
    '3 ساعات',
    '10 ساعات',
    '11 ساعة',
    '99 ساعة',
    '100 ساعة',
  ]);
  expect(translator('ja')('email.hours', { count: 1 })).toBe('1 時間');
});

describeEachDialect('Arabic and Japanese pages over HTTP', (dialect) => {
  let t: TestGatehouse;
  beforeEach(async () => {
    t = await createTestGatehouse(dialect, { env: { APP_NAME: 'Acme Login' } });
  });
  afterEach(async () => {
    await t.close();
  });

  test.each([
    ['ar', 'rtl'],
    ['ja', 'ltr'],
  ] as const)('?lang=%s: <html lang dir=%s>, translated titles, no raw keys, no English', async (lang, dir) => {
    for (const [pagePath, title] of Object.entries(TITLES[lang])) {
      const page = await (await t.request('GET', `${pagePath}?lang=${lang}`)).text();
      expect(page.slice(0, 60)).toMatch(new RegExp(`^<!doctype html>\\n<html lang="${lang}" dir="${dir}">`));
      expect(page).toContain(`<title>${title} · Acme Login</title>`);
      expect(page).toContain(`<h1>${title}</h1>`);
      const text = visibleText(page);
      const keys = Object.keys(CATALOGS.en).map((key) => key.replace(PLURAL, ''));
      expect({ pagePath, rawKeys: keys.filter((key) => text.includes(key)) }).toEqual({ pagePath, rawKeys: [] });
      expect({ pagePath, english: ENGLISH_SENTENCES.filter((sentence) => text.includes(sentence)) }).toEqual({ pagePath, english: [] });
      // The scripts' messages: every one a script can pick is the language's own, a counted one
      // in each of the language's plural forms (app.js picks `key_<form>` by Intl.PluralRules).
      const messages = JSON.parse(PAGE_MESSAGES.exec(page)?.[1] ?? 'null') as Record<string, string>;
      const catalog: Readonly<Record<string, string>> = CATALOGS[lang];
      const forms = new Intl.PluralRules(lang).resolvedOptions().pluralCategories;
      const picked = [...new Set(Object.keys(messages).flatMap((key) => (PLURAL.test(key) ? forms.map((form) => key.replace(PLURAL, `_${form}`)) : [key])))];
      const notOwn = picked.filter((key) => !Object.hasOwn(catalog, key) || messages[key] !== catalog[key]);
      expect({ pagePath, notOwn }).toEqual({ pagePath, notOwn: [] });
    }
  });
});

const DESKTOP = { width: 1280, height: 900 };
const PHONE = { width: 390, height: 844 };

interface Layout {
  direction: string;
  scrollWidth: number;
  innerWidth: number;
  /** The card's content box (inside border and padding). */
  contentLeft: number;
  contentRight: number;
  /** Each visible label of the form: where its text starts and ends. */
  labels: { text: string; left: number; right: number }[];
  /** The message area's border widths: the thick stripe is on the start side. */
  messageBorder: { left: string; right: string };
}

/** Where things are on the page, measured by Chromium: labels by their text's extent, since a block label spans the whole line. */
async function layoutOf(page: Page): Promise<Layout> {
  return page.evaluate(() => {
    const card = document.querySelector('main.card')!;
    const box = card.getBoundingClientRect();
    const style = getComputedStyle(card);
    const inset = (side: 'Left' | 'Right'): number => parseFloat(style[`padding${side}`]) + parseFloat(style[`border${side}Width`]);
    const labels = Array.from(card.querySelectorAll('label'))
      .filter((label) => label.getClientRects().length > 0 && (label.textContent ?? '').trim() !== '')
      .map((label) => {
        const range = document.createRange();
        range.selectNodeContents(label);
        const extent = range.getBoundingClientRect();
        return { text: (label.textContent ?? '').trim(), left: extent.left, right: extent.right };
      });
    // Empty, the message area has no border at all (it takes no room): measured as an error shows it.
    const messageArea = document.getElementById('message')!;
    const shown = messageArea.classList.contains('message--error') || messageArea.classList.contains('message--success');
    if (!shown) messageArea.classList.add('message--error');
    const computed = getComputedStyle(messageArea);
    const message = { borderLeftWidth: computed.borderLeftWidth, borderRightWidth: computed.borderRightWidth };
    if (!shown) messageArea.classList.remove('message--error');
    return {
      direction: getComputedStyle(document.documentElement).direction,
      scrollWidth: document.documentElement.scrollWidth,
      innerWidth: window.innerWidth,
      contentLeft: box.left + inset('Left'),
      contentRight: box.right - inset('Right'),
      labels,
      messageBorder: { left: message.borderLeftWidth, right: message.borderRightWidth },
    };
  });
}

/** Right to left: labels start at the card's right edge (and at least one ends well short of its left), nothing scrolls sideways. */
async function expectRightToLeft(page: Page, screenshot: string): Promise<void> {
  const layout = await layoutOf(page);
  expect(layout.direction).toBe('rtl');
  expect(layout.scrollWidth).toBeLessThanOrEqual(layout.innerWidth);
  expect(layout.labels.length).toBeGreaterThan(0);
  // The show-password box's label follows its checkbox, so it starts one checkbox in from the edge.
  for (const label of layout.labels) {
    expect({ label: label.text, fromRightEdge: Math.round(layout.contentRight - label.right) < 40 }).toEqual({ label: label.text, fromRightEdge: true });
    expect(label.left).toBeGreaterThanOrEqual(layout.contentLeft - 1);
  }
  expect(layout.labels.some((label) => label.left - layout.contentLeft > 60)).toBe(true);
  expect(layout.messageBorder).toEqual({ left: '1px', right: '4px' });
  await page.screenshot({ path: path.join(SCREENSHOTS, `${screenshot}.png`), fullPage: true });
}

describe.skipIf(!hasBrowser)('Arabic pages in Chromium, right to left', { timeout: 60_000 }, () => {
  const suite = useBrowserSuite({
    name: 'rtl',
    env: () => ({ RATE_LIMIT_REGISTER: '1000/15m', RATE_LIMIT_LOGIN: '1000/15m' }),
  });

  /** A new account with a verified address, over the API (the development-mode token). */
  async function newAccount(): Promise<string> {
    const email = `rtl-${randomBytes(4).toString('hex')}@example.com`;
    const registered = await fetch(`${suite.baseUrl}/api/auth/register`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email, password: PASSWORD }),
    });
    expect(registered.status).toBe(201);
    const { verificationToken } = (await registered.json()) as { verificationToken: string };
    const verified = await fetch(`${suite.baseUrl}/api/auth/verify-email`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ token: verificationToken }),
    });
    expect(verified.status).toBe(200);
    return email;
  }

  test.each([
    ['desktop', DESKTOP],
    ['phone', PHONE],
  ] as const)('/login and /register at %s width', async (name, viewport) => {
    const page = await suite.openPage(viewport);
    await page.goto('/login?lang=ar');
    expect(await page.title()).toBe(`${TITLES.ar['/login']} · Gatehouse`);
    await expectRightToLeft(page, `rtl-login-${name}`);

    // The cookie ?lang= set keeps the next page in Arabic.
    await page.goto('/register');
    expect(await page.title()).toBe(`${TITLES.ar['/register']} · Gatehouse`);
    // The password rules' marks sit on the right, before each rule's text.
    const rule = await page.evaluate(() => {
      const item = document.querySelector('.rule')!;
      const mark = getComputedStyle(item, '::before');
      return { paddingLeft: getComputedStyle(item).paddingLeft, markLeft: mark.left, markRight: mark.right };
    });
    expect(rule.paddingLeft).toBe('0px');
    expect(rule.markRight).toBe('0px');
    expect(rule.markLeft).not.toBe('0px');
    await expectRightToLeft(page, `rtl-register-${name}`);
  });

  test.each([
    ['desktop', DESKTOP],
    ['phone', PHONE],
  ] as const)('/account at %s width, after signing in on the Arabic page', async (name, viewport) => {
    const email = await newAccount();
    const page = await suite.openPage(viewport);
    await page.goto('/login?lang=ar&return_to=%2Faccount');
    await page.fill('#email', email);
    await page.fill('#password', PASSWORD);
    await page.click('button[type="submit"]');
    await page.waitForURL('**/account');
    await page.waitForSelector('#session-list li');
    expect(await page.locator('h1').textContent()).toBe(CATALOGS.ar['common.manageAccount']);
    await expectRightToLeft(page, `rtl-account-${name}`);
  });
});
