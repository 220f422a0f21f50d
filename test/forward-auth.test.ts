/**
 * GET /api/auth/forward, the session check for a reverse proxy's forward-auth (nginx
 * `auth_request`, Traefik `forwardAuth`, Caddy `forward_auth`): who is signed in, in headers, for
 * the proxy to pass on; 401 for everyone else. Through a real nginx: test/nginx.test.ts.
 */
import { afterEach, beforeEach, expect, test } from 'vitest';
import { STRONG_PASSWORD, cookieFrom, createTestGatehouse, describeEachDialect, type TestGatehouse } from './support/harness.js';

const COOKIE = 'gatehouse_session';

describeEachDialect('forward-auth', (dialect) => {
  let t: TestGatehouse;
  let cookie: string;
  let userId: string;

  beforeEach(async () => {
    t = await createTestGatehouse(dialect);
    const response = await t.request('POST', '/api/auth/register', { json: { email: 'fern@example.com', password: STRONG_PASSWORD } });
    cookie = cookieFrom(response, COOKIE)!;
    const me = await t.request('GET', '/api/auth/session', { cookie });
    userId = ((await me.json()) as { user: { id: string } }).user.id;
  });
  afterEach(async () => {
    await t.close();
  });

  const forward = (cookieHeader?: string) => t.request('GET', '/api/auth/forward', cookieHeader ? { cookie: cookieHeader } : {});

  test('a valid session: 200 with the user in headers, an empty body, never cached', async () => {
    const response = await forward(cookie);
    expect(response.status).toBe(200);
    expect(response.headers.get('x-auth-user-id')).toBe(userId);
    expect(response.headers.get('x-auth-email')).toBe('fern@example.com');
    expect(response.headers.get('x-auth-methods')).toBe('password');
    expect(response.headers.get('cache-control')).toBe('no-store');
    expect(await response.text()).toBe('');
  });

  test('no cookie, a forged one, or a session signed out: 401 and no user headers', async () => {
    const logout = await t.request('POST', '/api/auth/logout', { cookie });
    expect(logout.status).toBe(200);
    for (const header of [undefined, `${COOKIE}=garbage`, cookie]) {
      const response = await forward(header);
      expect(response.status, String(header)).toBe(401);
      expect(await response.json()).toMatchObject({ error: 'not_authenticated' });
      expect(response.headers.get('x-auth-user-id')).toBeNull();
      expect(response.headers.get('x-auth-email')).toBeNull();
    }
  });

  test('headers a client sends itself are never answered back', async () => {
    const response = await t.request('GET', '/api/auth/forward', { headers: { 'x-auth-user-id': 'admin', 'x-auth-email': 'boss@example.com' } });
    expect(response.status).toBe(401);
    expect(response.headers.get('x-auth-user-id')).toBeNull();
  });

  test('an expired session is refused like the session check refuses it', async () => {
    t.clock.advance(86400_000);
    expect((await forward(cookie)).status).toBe(401);
    expect((await t.request('GET', '/api/auth/session', { cookie })).status).toBe(401);
  });

  test('a body is never read: a POST is not this route', async () => {
    const response = await t.request('POST', '/api/auth/forward', { cookie, json: {} });
    expect(response.status).not.toBe(200);
  });
});
