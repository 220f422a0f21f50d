import { SignJWT, UnsecuredJWT, decodeJwt } from 'jose';
import { afterEach, beforeEach, expect, test } from 'vitest';
import { STRONG_PASSWORD, TEST_JWT_SECRET, cookieFrom, createTestGatehouse, describeEachDialect, type TestGatehouse } from './support/harness.js';

const COOKIE = 'gatehouse_session';

describeEachDialect('sessions', (dialect) => {
  let t: TestGatehouse;
  let cookie: string;
  let token: string;

  beforeEach(async () => {
    t = await createTestGatehouse(dialect);
    const response = await t.request('POST', '/api/auth/register', { json: { email: 'sam@example.com', password: STRONG_PASSWORD } });
    cookie = cookieFrom(response, COOKIE)!;
    token = cookie.slice(COOKIE.length + 1);
  });
  afterEach(async () => {
    await t.close();
  });

  const session = (cookieHeader?: string) => t.request('GET', '/api/auth/session', cookieHeader ? { cookie: cookieHeader } : {});
  const sign = (claims: Record<string, unknown>, secret = TEST_JWT_SECRET, alg = 'HS256') =>
    new SignJWT(claims).setProtectedHeader({ alg }).sign(new TextEncoder().encode(secret));

  test('GET /session answers 200 with the user and the session', async () => {
    const response = await session(cookie);
    expect(response.status).toBe(200);
    const body = await response.json();
    expect(Object.keys(body.user).sort()).toEqual(['createdAt', 'email', 'emailVerified', 'id', 'lastLoginAt']);
    expect(body.user).toMatchObject({ email: 'sam@example.com', emailVerified: false, createdAt: t.clock.now().toISOString() });
    expect(body.session.id).toBe(decodeJwt(token).sid);
    expect(body.session.expires).toBe(new Date(t.clock.now().getTime() + 86400_000).toISOString());
    expect(response.headers.get('cache-control')).toBe('no-store');
  });

  test('GET /session answers 401 not_authenticated without a cookie or with garbage', async () => {
    for (const header of [undefined, `${COOKIE}=`, `${COOKIE}=garbage`, `${COOKIE}=a.b.c`, 'other=1']) {
      const response = await session(header);
      expect(response.status, String(header)).toBe(401);
      expect(await response.json()).toMatchObject({ error: 'not_authenticated' });
    }
  });

  test('a session expires when SESSION_EXPIRES_IN has passed (clock moved, not slept)', async () => {
    t.clock.advance(86400_000 - 1000);
    expect((await session(cookie)).status).toBe(200);
    t.clock.advance(1000);
    expect((await session(cookie)).status).toBe(401);
  });

  test('refuses alg: none, a wrong key, a tampered payload and an expired exp', async () => {
    const claims = decodeJwt(token);
    const unsecured = new UnsecuredJWT({ ...claims }).encode();
    const otherKey = await sign({ ...claims }, 'another-secret-that-is-also-long-enough-42');
    const [header, , signature] = token.split('.');
    const tamperedPayload = Buffer.from(JSON.stringify({ ...claims, sub: '00000000-0000-0000-0000-000000000000' })).toString('base64url');
    const tampered = `${header}.${tamperedPayload}.${signature}`;
    const expired = await sign({ ...claims, exp: Math.floor(t.clock.now().getTime() / 1000) - 1 });
    const hs512 = await sign({ ...claims }, TEST_JWT_SECRET, 'HS512');
    // Twice each: the verifier remembers recent verdicts (src/session/token.ts), and a remembered
    // refusal must stay a refusal while the genuine token keeps working beside it.
    for (const round of [1, 2]) {
      for (const forged of [unsecured, otherKey, tampered, expired, hs512]) {
        expect((await session(`${COOKIE}=${forged}`)).status, `round ${round}`).toBe(401);
      }
      expect((await session(cookie)).status, `round ${round}`).toBe(200);
    }
  });

  test('key confusion: tokens claiming RS256 or ES256 are refused, whatever they are signed with', async () => {
    const { generateKeyPair, exportSPKI } = await import('jose');
    const claims = decodeJwt(token);
    for (const alg of ['RS256', 'ES256'] as const) {
      const { privateKey, publicKey } = await generateKeyPair(alg);
      const asymmetric = await new SignJWT({ ...claims }).setProtectedHeader({ alg }).sign(privateKey);
      expect((await session(`${COOKIE}=${asymmetric}`)).status, alg).toBe(401);
      // The classic confusion: HS256 keyed with the public key, hoping the server mixes key types.
      const confused = await new SignJWT({ ...claims }).setProtectedHeader({ alg: 'HS256' }).sign(new TextEncoder().encode(await exportSPKI(publicKey)));
      expect((await session(`${COOKIE}=${confused}`)).status, `${alg} public key as HMAC secret`).toBe(401);
    }
  });

  test('a correctly signed token whose row does not hold it is refused (re-signed with the real key)', async () => {
    // A token minted with the real secret but not issued by the server: its hash is not the row's.
    const claims = decodeJwt(token);
    const minted = await sign({ ...claims, iat: claims.iat! + 1 });
    expect((await session(`${COOKIE}=${minted}`)).status).toBe(401);
    expect((await session(cookie)).status).toBe(200);
  });

  test('POST /logout deletes the session and clears the cookie; the old token no longer works', async () => {
    const response = await t.request('POST', '/api/auth/logout', { json: {}, cookie });
    expect(response.status).toBe(200);
    const cleared = response.headers.getSetCookie().find((h) => h.startsWith(`${COOKIE}=`));
    expect(cleared).toMatch(/Max-Age=0/);
    expect((await session(cookie)).status).toBe(401);
  });

  test("POST /logout with no body and no Content-Type signs out (the spec's bodyless POST); a form body is 415", async () => {
    const form = await t.request('POST', '/api/auth/logout', { cookie, body: 'x=1', headers: { 'content-type': 'application/x-www-form-urlencoded' } });
    expect(form.status).toBe(415);
    expect((await session(cookie)).status).toBe(200);
    expect((await t.request('POST', '/api/auth/logout', { cookie })).status).toBe(200);
    expect((await session(cookie)).status).toBe(401);
  });

  test('POST /logout without a session is a harmless 200', async () => {
    expect((await t.request('POST', '/api/auth/logout', { json: {} })).status).toBe(200);
  });

  test('logging in again creates a second, independent session', async () => {
    const second = cookieFrom(await t.request('POST', '/api/auth/login', { json: { email: 'sam@example.com', password: STRONG_PASSWORD } }), COOKIE)!;
    await t.request('POST', '/api/auth/logout', { json: {}, cookie: second });
    expect((await session(second)).status).toBe(401);
    expect((await session(cookie)).status).toBe(200);
  });

  test('getSession(request) reads the cookie for an application that mounts the library', async () => {
    const found = await t.gatehouse.getSession(new Request('http://localhost:3000/', { headers: { cookie: `a=b; ${cookie}` } }));
    expect(found?.user.email).toBe('sam@example.com');
    expect(await t.gatehouse.getSession(new Request('http://localhost:3000/'))).toBeNull();
  });

  test('the session row keeps only a SHA-256 of the token, never the token', async () => {
    const { createHash } = await import('node:crypto');
    const sid = decodeJwt(token).sid as string;
    const found = await t.gatehouse.stores.sessions.findSessionWithUser(sid);
    expect(found?.session.tokenHash).toBe(createHash('sha256').update(token).digest('hex'));
    expect(JSON.stringify(found)).not.toContain(token);
  });
});

describeEachDialect('sessions in production', (dialect) => {
  test('the cookie is Secure and named __Host-gatehouse_session', async () => {
    const t = await createTestGatehouse(dialect, {
      env: { NODE_ENV: 'production', BASE_URL: 'https://auth.example.com', BCRYPT_ROUNDS: '10', METRICS_PUBLIC: 'true' },
    });
    try {
      const response = await t.request('POST', '/api/auth/register', { json: { email: 'prod@example.com', password: STRONG_PASSWORD } });
      const header = response.headers.getSetCookie()[0]!;
      expect(header).toMatch(/^__Host-gatehouse_session=/);
      expect(header).toMatch(/; Secure/);
      expect(header).toMatch(/; HttpOnly/);
      expect(header).toMatch(/; SameSite=Lax/);
      expect(header).not.toMatch(/Domain=/);
      expect(response.headers.get('strict-transport-security')).toMatch(/max-age=/);
    } finally {
      await t.close();
    }
  });
});

describeEachDialect('SESSION_IDLE_TIMEOUT', (dialect) => {
  const MINUTE = 60_000;
  let t: TestGatehouse;
  afterEach(async () => {
    await t.close();
  });

  async function signUp(env: Record<string, string>): Promise<{ cookie: string; sessionId: string }> {
    t = await createTestGatehouse(dialect, { env });
    const response = await t.request('POST', '/api/auth/register', { json: { email: 'idle@example.com', password: STRONG_PASSWORD } });
    const cookie = cookieFrom(response, COOKIE)!;
    return { cookie, sessionId: decodeJwt(cookie.slice(COOKIE.length + 1)).sid as string };
  }
  const session = (cookie: string) => t.request('GET', '/api/auth/session', { cookie });
  // The last-seen write runs off the response path: let it land, as the next request would find it.
  const settle = () => t.gatehouse.deliverQueuedEmails();

  test('off by default: a session unused for 23 hours still works', async () => {
    const { cookie } = await signUp({});
    t.clock.advance(23 * 60 * MINUTE);
    expect((await session(cookie)).status).toBe(200);
  });

  test('a session idle past the timeout is refused like an expired one (401 not_authenticated) and deleted; the effective timeout is up to a minute longer', async () => {
    const { cookie, sessionId } = await signUp({ SESSION_IDLE_TIMEOUT: '30m' });
    // lastSeenAt is refreshed at most once a minute, so a session is refused only past the
    // timeout plus that minute: idle exactly that long, it still works (and is seen again).
    t.clock.advance(31 * MINUTE);
    expect((await session(cookie)).status).toBe(200);
    await settle();
    t.clock.advance(31 * MINUTE + 1000);
    const refused = await session(cookie);
    expect(refused.status).toBe(401);
    expect(await refused.json()).toEqual({ error: 'not_authenticated', message: expect.any(String) });
    // Deleted at this first refusal: gone from the store and from the library's getSession.
    expect(await t.gatehouse.stores.sessions.findSessionWithUser(sessionId)).toBeNull();
    expect(await t.gatehouse.getSession(new Request('http://localhost:3000/', { headers: { cookie } }))).toBeNull();
    // Coming back within the timeout does not revive it.
    t.clock.advance(MINUTE);
    expect((await session(cookie)).status).toBe(401);
  });

  test('a session used within the timeout stays alive well past the timeout in total, until it goes idle', async () => {
    const { cookie } = await signUp({ SESSION_IDLE_TIMEOUT: '30m' });
    // Used every 29 minutes for 4 hours and more: never idle for the timeout.
    for (let step = 1; step <= 9; step += 1) {
      t.clock.advance(29 * MINUTE);
      expect((await session(cookie)).status, `after ${step * 29} minutes`).toBe(200);
      await settle();
    }
    t.clock.advance(32 * MINUTE);
    expect((await session(cookie)).status).toBe(401);
  });

  test('the account pages and getSession(request) honour it too', async () => {
    const { cookie } = await signUp({ SESSION_IDLE_TIMEOUT: '1h' });
    t.clock.advance(62 * MINUTE);
    expect(await t.gatehouse.getSession(new Request('http://localhost:3000/', { headers: { cookie } }))).toBeNull();
    expect((await t.request('GET', '/api/auth/sessions', { cookie })).status).toBe(401);
  });
});
