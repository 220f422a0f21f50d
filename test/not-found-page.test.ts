/**
 * An address no route serves: a browser (GET, Accept naming text/html, outside /api/) gets the
 * 404 page in its language, with the layout and the pages' headers; the API, and any client that
 * does not ask for HTML, keeps the JSON 404 whose `error` code is the contract.
 */
import { afterEach, beforeEach, expect, test } from 'vitest';
import { PAGE_CONTENT_SECURITY_POLICY } from '../src/web/routes.js';
import { createTestGatehouse, describeEachDialect, type TestGatehouse } from './support/harness.js';

const BROWSER_ACCEPT = 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8';

describeEachDialect('the 404 page', (dialect) => {
  let t: TestGatehouse;
  beforeEach(async () => {
    t = await createTestGatehouse(dialect);
  });
  afterEach(async () => {
    await t.close();
  });

  test('a browser gets the page: status 404, the layout, the pages’ policy, in the language it asks for', async () => {
    const english = await t.request('GET', '/no-such-page', { headers: { accept: BROWSER_ACCEPT } });
    expect(english.status).toBe(404);
    expect(english.headers.get('content-type')).toMatch(/^text\/html/);
    expect(english.headers.get('content-security-policy')).toBe(PAGE_CONTENT_SECURITY_POLICY);
    const page = await english.text();
    expect(page).toContain('<html lang="en" dir="ltr">');
    expect(page).toContain('<title>Page not found · Gatehouse</title>');
    expect(page).toContain('<h1>Page not found</h1>');
    expect(page).toContain('id="language-switcher"');
    expect(page).toContain('href="/login"');

    const german = await t.request('GET', '/settings/old?x=1', { headers: { accept: BROWSER_ACCEPT, 'accept-language': 'de-DE,de;q=0.9' } });
    expect(german.status).toBe(404);
    const germanPage = await german.text();
    expect(germanPage).toContain('<html lang="de" dir="ltr">');
    expect(germanPage).toContain('<h1>Seite nicht gefunden</h1>');

    const arabic = await t.request('GET', '/nothing-here?lang=ar', { headers: { accept: BROWSER_ACCEPT } });
    expect(arabic.status).toBe(404);
    expect(await arabic.text()).toContain('<html lang="ar" dir="rtl">');
  });

  test('the API, a JSON client, a client that names no type, and other methods keep the JSON 404', async () => {
    const cases: [string, string, Record<string, string>][] = [
      ['GET', '/api/auth/no-such-thing', { accept: BROWSER_ACCEPT }],
      ['GET', '/api/nothing', { accept: 'text/html' }],
      ['GET', '/no-such-page', { accept: 'application/json' }],
      ['GET', '/no-such-page', {}],
      ['POST', '/no-such-page', { accept: BROWSER_ACCEPT, 'content-type': 'application/json' }],
    ];
    for (const [method, path, headers] of cases) {
      const response = await t.request(method, path, { headers });
      expect([method, path, response.status, response.headers.get('content-type')]).toEqual([method, path, 404, 'application/json; charset=utf-8']);
      expect((await response.json()).error).toBe('not_found');
    }
  });

  test('existing pages, assets and API routes answer as before for a browser', async () => {
    const login = await t.request('GET', '/login', { headers: { accept: BROWSER_ACCEPT } });
    expect(login.status).toBe(200);
    const asset = await t.request('GET', '/assets/app.css', { headers: { accept: BROWSER_ACCEPT } });
    expect([asset.status, asset.headers.get('content-type')]).toEqual([200, 'text/css; charset=utf-8']);
    const session = await t.request('GET', '/api/auth/session', { headers: { accept: BROWSER_ACCEPT } });
    expect([session.status, (await session.json()).error]).toEqual([401, 'not_authenticated']);
    // A known path asked with another method is still 405 for the API client.
    const wrongMethod = await t.request('GET', '/api/auth/login', { headers: { accept: 'application/json' } });
    expect(wrongMethod.status).toBe(405);
  });
});
