import { afterEach, beforeEach, expect, test } from 'vitest';
import { PAGE_CONTENT_SECURITY_POLICY } from '../src/web/routes.js';
import { STRONG_PASSWORD, cookieFrom, createTestGatehouse, describeEachDialect, type TestGatehouse } from './support/harness.js';

describeEachDialect('the /account and /confirm-email-change pages', (dialect) => {
  let t: TestGatehouse;
  let cookie: string;
  beforeEach(async () => {
    t = await createTestGatehouse(dialect, { env: { NODE_ENV: 'development' } });
    cookie = cookieFrom(
      await t.request('POST', '/api/auth/register', { json: { email: 'page@example.com', password: STRONG_PASSWORD } }),
      'gatehouse_session',
    )!;
  });
  afterEach(async () => {
    await t.close();
  });

  test('GET /account without a valid session redirects to sign in and back', async () => {
    for (const headers of [{}, { cookie: 'gatehouse_session=forged' }]) {
      const response = await t.request('GET', '/account', headers);
      expect(response.status).toBe(302);
      expect(response.headers.get('location')).toBe('/login?return_to=%2Faccount');
    }
  });

  test('GET /account renders every section under the pages’ CSP, with its own script and no inline code', async () => {
    const response = await t.request('GET', '/account', { cookie });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-security-policy')).toBe(PAGE_CONTENT_SECURITY_POLICY);
    const page = await response.text();
    for (const id of ['session-list', 'revoke-others', 'password-form', 'email-form', 'linked-list', 'delete-form']) expect(page).toContain(`id="${id}"`);
    expect(page).toContain('<script src="/assets/account.js" defer></script>');
    expect(page).toContain('<strong id="current-email">page@example.com</strong>');
    // No inline script, style attribute or event handler attribute: the CSP would refuse them.
    expect(page).not.toMatch(/<script>|\sstyle="|\son[a-z]+="/);
    const script = await t.request('GET', '/assets/account.js');
    expect(script.status).toBe(200);
    expect(script.headers.get('content-type')).toBe('text/javascript; charset=utf-8');
  });

  test('GET /confirm-email-change shows a Confirm form and spends nothing; POST through the API does', async () => {
    const { token } = await (
      await t.request('POST', '/api/auth/email/change', { cookie, json: { newEmail: 'moved@example.com', currentPassword: STRONG_PASSWORD } })
    ).json();
    const page = await t.request('GET', `/confirm-email-change?token=${encodeURIComponent(token)}`);
    expect(page.status).toBe(200);
    const text = await page.text();
    expect(text).toContain(`<input type="hidden" name="token" value="${token}">`);
    expect(text).toContain('data-account-api="/api/auth/email/change/confirm"');
    expect((await (await t.request('GET', '/api/auth/session', { cookie })).json()).user.email).toBe('page@example.com');
    expect((await t.request('POST', '/api/auth/email/change/confirm', { cookie, json: { token } })).status).toBe(200);
    expect((await (await t.request('GET', '/api/auth/session', { cookie })).json()).user.email).toBe('moved@example.com');

    const missing = await (await t.request('GET', '/confirm-email-change')).text();
    expect(missing).toContain('This link is incomplete');
    expect(missing).not.toContain('<form');
  });
});
