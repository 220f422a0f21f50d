/**
 * The session check's fast path (session/fast-path.ts): `gatehouse serve` answers GET
 * /api/auth/session and /api/auth/forward on Node's objects before the app. Over real HTTP on each
 * database, every answer is compared with the library face's (`gatehouse.fetch`, which never takes
 * the fast path) for the same request: the same status, the same headers (but the request id and
 * Node's connection headers) and the same body bytes — signed in, signed out, a forged or revoked
 * token, a disabled account, an idle session — and the requests it does not take go to the app as
 * before. The metrics count its answers under the same route.
 */
import { randomBytes } from 'node:crypto';
import http from 'node:http';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { MockClock } from '../src/clock.js';
import { loadConfig } from '../src/config.js';
import { createLogger } from '../src/logger.js';
import { startServer, type RunningServer } from '../src/server.js';
import { comparable, overHttp, viaLibrary, type Raw } from './support/fast-path.js';
import { STRONG_PASSWORD, TEST_JWT_SECRET, describeEachDialect, openTestDatabase } from './support/harness.js';

describeEachDialect('the session check on the fast path answers as the app does', (dialect) => {
  let server: RunningServer;
  let drop: () => Promise<void>;
  let clock: MockClock;
  let cookie: string;

  beforeAll(async () => {
    const opened = await openTestDatabase(dialect);
    drop = opened.drop;
    clock = new MockClock(Date.UTC(2026, 10, 27, 12, 0, 0));
    const config = loadConfig({
      JWT_SECRET: TEST_JWT_SECRET,
      BCRYPT_ROUNDS: '4',
      PORT: '0',
      HOST: '127.0.0.1',
      LOG_LEVEL: 'silent',
      ADMIN_API_KEY: 'fast-path-admin-key-0123456789abcdef',
      SESSION_IDLE_TIMEOUT: '1h',
    });
    server = await startServer(config, { clock, database: opened.database, logger: createLogger({ level: 'silent' }), mailer: { send: async () => {} } });
    cookie = await signUp(`fast-${randomBytes(3).toString('hex')}@example.com`);
  });
  afterAll(async () => {
    await server?.stop();
    await drop?.();
  });

  async function signUp(email: string): Promise<string> {
    const registered = await fetch(`${server.url}/api/auth/register`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email, password: STRONG_PASSWORD }),
    });
    expect(registered.status).toBe(201);
    return registered.headers.getSetCookie()[0]!.split(';')[0]!;
  }

  const overHttpGet = (path: string, headers: Record<string, string>): Promise<Raw> => overHttp(server.url, { path, headers });
  const viaLibraryGet = (path: string, headers: Record<string, string>): Promise<Raw> =>
    viaLibrary((request, info) => server.gatehouse.fetch(request, info), server.url, { path, headers });

  async function same(path: string, headers: Record<string, string>, status: number): Promise<Raw> {
    const [fast, library] = [await overHttpGet(path, headers), await viaLibraryGet(path, headers)];
    expect(fast.status).toBe(status);
    expect(comparable(fast)).toEqual(comparable(library));
    expect(fast.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
    return fast;
  }

  function takes(path: string, headers: Record<string, string>, method = 'GET'): boolean {
    return server.gatehouse.fastRoute({ method, url: path, headers: { host: '127.0.0.1', ...headers } } as unknown as http.IncomingMessage) !== null;
  }

  test('signed in, signed out and forged: the same answers, byte for byte', async () => {
    expect(takes('/api/auth/session', { cookie })).toBe(true);
    expect(takes('/api/auth/forward', { cookie })).toBe(true);
    const signedIn = await same('/api/auth/session', { cookie }, 200);
    expect(JSON.parse(signedIn.body)).toMatchObject({ user: { emailVerified: false }, session: { methods: ['password'] } });
    const forward = await same('/api/auth/forward', { cookie }, 200);
    expect(forward.headers['x-auth-methods']).toBe('password');
    expect(forward.body).toBe('');
    const refusedHeaders: Record<string, string>[] = [{}, { cookie: 'gatehouse_session=not.a.jwt' }, { cookie: 'gatehouse_session=' }, { cookie: 'other=1' }];
    for (const headers of refusedHeaders) {
      const refused = await same('/api/auth/session', headers, 401);
      expect(JSON.parse(refused.body)).toEqual({ error: 'not_authenticated', message: 'You are not signed in.' });
      await same('/api/auth/forward', headers, 401);
    }
  });

  test('revoked, disabled and idle sessions are refused at once, as the app refuses them', async () => {
    const revoked = await signUp(`revoked-${randomBytes(3).toString('hex')}@example.com`);
    await same('/api/auth/session', { cookie: revoked }, 200);
    expect((await fetch(`${server.url}/api/auth/logout`, { method: 'POST', headers: { cookie: revoked } })).status).toBe(200);
    await same('/api/auth/session', { cookie: revoked }, 401);

    const disabledCookie = await signUp(`disabled-${randomBytes(3).toString('hex')}@example.com`);
    const { user } = (await (await fetch(`${server.url}/api/auth/session`, { headers: { cookie: disabledCookie } })).json()) as { user: { id: string } };
    const disabled = await fetch(`${server.url}/api/admin/users/${user.id}/disable`, {
      method: 'POST',
      headers: { authorization: 'Bearer fast-path-admin-key-0123456789abcdef' },
    });
    expect(disabled.status).toBe(200);
    await same('/api/auth/forward', { cookie: disabledCookie }, 401);

    const idle = await signUp(`idle-${randomBytes(3).toString('hex')}@example.com`);
    clock.advance(2 * 60 * 60 * 1000 + 1000);
    expect((await overHttpGet('/api/auth/session', { cookie: idle })).status).toBe(401);
    expect((await viaLibraryGet('/api/auth/session', { cookie: idle })).status).toBe(401);
  });

  test('what it does not take goes to the app, and the metrics count its answers under the same route', async () => {
    cookie = await signUp(`again-${randomBytes(3).toString('hex')}@example.com`);
    expect(takes('/api/auth/session?x=1', { cookie })).toBe(false);
    expect(takes('/api/auth/session', { cookie, origin: 'https://elsewhere.example' })).toBe(false);
    expect(takes('/api/auth/session', { cookie, 'x-forwarded-for': '203.0.113.9' })).toBe(false);
    expect(takes('/api/auth/session', { cookie }, 'HEAD')).toBe(false);
    // A Host the Node adapter refuses: its 400 malformed_request, not the session.
    for (const host of ['exa mple.com', 'x/y', '[::1']) expect(takes('/api/auth/session', { cookie, host })).toBe(false);
    expect(takes('/api/auth/session', { cookie, host: 'auth.example.com:8443' })).toBe(true);
    expect(takes('/api/auth/sessions', { cookie })).toBe(false);
    expect((await overHttpGet('/api/auth/session?x=1', { cookie })).status).toBe(200);
    expect((await overHttpGet('/api/auth/session', { cookie, 'x-forwarded-for': '203.0.113.9' })).status).toBe(200);

    const count = async (status: string): Promise<number> => {
      const text = await (await fetch(`${server.url}/metrics`)).text();
      const line = text
        .split('\n')
        .find((l) => l.startsWith('gatehouse_http_requests_total{') && l.includes('route="/api/auth/session"') && l.includes(`status="${status}"`));
      return line === undefined ? 0 : Number(line.split(' ').pop());
    };
    const [ok, refused] = [await count('200'), await count('401')];
    await overHttpGet('/api/auth/session', { cookie });
    await overHttpGet('/api/auth/session', {});
    expect(await count('200')).toBe(ok + 1);
    expect(await count('401')).toBe(refused + 1);
  });
});
