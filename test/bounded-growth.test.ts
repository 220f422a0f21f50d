/**
 * Bounded growth (issue 22 item 5, DESIGN §9.8): the sweep of expired sessions, audit rows past
 * AUDIT_RETENTION_DAYS and spent tokens; the rate limit on the provider callback; a pending
 * sign-in accepted once. Time moves through the clock; the sweep is called with it.
 */
import { randomBytes } from 'node:crypto';
import { sql } from 'kysely';
import { afterAll, afterEach, beforeAll, expect, test, vi } from 'vitest';
import { MockClock } from '../src/clock.js';
import { ConfigError, loadConfig } from '../src/config.js';
import { migrateToLatest } from '../src/db/connect.js';
import { createStores } from '../src/db/stores.js';
import { createLogger } from '../src/logger.js';
import { startServer } from '../src/server.js';
import { startFakeGitHub, type FakeGitHub } from './support/fake-github.js';
import {
  STRONG_PASSWORD,
  TEST_JWT_SECRET,
  cookieFrom,
  createTestGatehouse,
  describeEachDialect,
  openTestDatabase,
  type Dialect,
  type TestGatehouse,
} from './support/harness.js';

const DAY_MS = 24 * 60 * 60 * 1000;
const HOUR_MS = 60 * 60 * 1000;
const SESSION = 'gatehouse_session';
const PENDING = 'gatehouse_oauth';
const TOKEN_PATH = '/login/oauth/access_token';

let fake: FakeGitHub;
beforeAll(async () => {
  fake = await startFakeGitHub();
});
afterAll(async () => {
  await fake.close();
});

const oauthEnv = (overrides: Record<string, string> = {}): Record<string, string> => ({
  GITHUB_CLIENT_ID: fake.clientId,
  GITHUB_CLIENT_SECRET: fake.clientSecret,
  GITHUB_AUTH_URL: fake.authUrl,
  GITHUB_API_URL: fake.apiUrl,
  AUTH_SECRET: 'test-auth-secret-0123456789',
  ENCRYPTION_KEY_BASE64: randomBytes(32).toString('base64'),
  ...overrides,
});

test('AUDIT_RETENTION_DAYS: 365 by default, 1 to 36500, and a bad value stops the start naming the variable', () => {
  expect(loadConfig({}).auditRetentionDays).toBe(365);
  expect(loadConfig({ AUDIT_RETENTION_DAYS: '30' }).auditRetentionDays).toBe(30);
  for (const bad of ['0', '36501', 'a year', '1.5']) {
    expect(() => loadConfig({ AUDIT_RETENTION_DAYS: bad })).toThrow(ConfigError);
    expect(() => loadConfig({ AUDIT_RETENTION_DAYS: bad })).toThrow(/AUDIT_RETENTION_DAYS/);
  }
});

test('RATE_LIMIT_OAUTH_CALLBACK: 20 per 15 minutes by default, and a bad value names the variable', () => {
  expect(loadConfig({}).rateLimits.oauthCallback).toEqual({ points: 20, durationSeconds: 900 });
  expect(loadConfig({ RATE_LIMIT_OAUTH_CALLBACK: '3/1m' }).rateLimits.oauthCallback).toEqual({ points: 3, durationSeconds: 60 });
  expect(() => loadConfig({ RATE_LIMIT_OAUTH_CALLBACK: 'many' })).toThrow(/RATE_LIMIT_OAUTH_CALLBACK/);
});

describeEachDialect('the sweep', (dialect: Dialect) => {
  let t: TestGatehouse;
  afterEach(async () => {
    await t.close();
  });

  const register = async (email: string) => {
    const response = await t.request('POST', '/api/auth/register', { json: { email, password: STRONG_PASSWORD } });
    expect(response.status).toBe(201);
    return { cookie: cookieFrom(response, SESSION)!, verificationToken: ((await response.json()) as { verificationToken: string }).verificationToken };
  };
  const auditTypes = async () => (await t.gatehouse.stores.audit.listRecentEvents(100)).map((e) => e.type);
  const idOf = (token: string) => token.split('.')[0]!;

  test('audit rows older than AUDIT_RETENTION_DAYS are deleted, newer ones kept', async () => {
    t = await createTestGatehouse(dialect, { env: { AUDIT_RETENTION_DAYS: '30' } });
    await register('old@example.com');
    t.clock.advance(29 * DAY_MS);
    const login = await t.request('POST', '/api/auth/login', { json: { email: 'old@example.com', password: STRONG_PASSWORD } });
    expect(login.status).toBe(200);
    expect((await t.gatehouse.sweep()).auditEvents).toBe(0);
    expect(await auditTypes()).toEqual(['login_success', 'user_created']);

    t.clock.advance(2 * DAY_MS); // the registration is now 31 days old, the login 2 days
    expect((await t.gatehouse.sweep()).auditEvents).toBe(1);
    expect(await auditTypes()).toEqual(['login_success']);
  });

  test('the default retention is 365 days', async () => {
    t = await createTestGatehouse(dialect);
    await register('kept@example.com');
    t.clock.advance(364 * DAY_MS);
    await t.gatehouse.sweep();
    expect(await auditTypes()).toEqual(['user_created']);
    t.clock.advance(2 * DAY_MS);
    await t.gatehouse.sweep();
    expect(await auditTypes()).toEqual([]);
  });

  test('expired sessions, expired verification tokens and used or expired reset tokens are deleted', async () => {
    t = await createTestGatehouse(dialect, { env: { NODE_ENV: 'development' } });
    const { verificationToken } = await register('tokens@example.com');
    const requestReset = async () => {
      const response = await t.request('POST', '/api/auth/password-reset/request', { json: { email: 'tokens@example.com' } });
      return ((await response.json()) as { token: string }).token;
    };
    const verification = () => t.gatehouse.stores.verificationTokens.findVerificationToken(idOf(verificationToken));

    // A used reset token goes at the next sweep, even before it expires.
    const used = await requestReset();
    expect((await t.request('POST', '/api/auth/password-reset/confirm', { json: { token: used, password: 'Brand-New-Pass-7' } })).status).toBe(200);
    expect(await t.gatehouse.stores.resetTokens.findResetToken(idOf(used))).not.toBeNull();
    expect((await t.gatehouse.sweep()).resetTokens).toBe(1);
    expect(await t.gatehouse.stores.resetTokens.findResetToken(idOf(used))).toBeNull();

    // An unused reset token stays until it expires (1 hour), then goes.
    const unused = await requestReset();
    await t.gatehouse.sweep();
    expect(await t.gatehouse.stores.resetTokens.findResetToken(idOf(unused))).not.toBeNull();
    t.clock.advance(HOUR_MS + 1000);
    expect((await t.gatehouse.sweep()).resetTokens).toBe(1);
    expect(await t.gatehouse.stores.resetTokens.findResetToken(idOf(unused))).toBeNull();

    // The verification token lives 24 hours.
    expect(await verification()).not.toBeNull();
    t.clock.advance(24 * HOUR_MS);
    const report = await t.gatehouse.sweep();
    expect(report.verificationTokens).toBe(1);
    expect(await verification()).toBeNull();
    // The reset revoked the registration's session; a fresh login's session expires after a day.
    const login = await t.request('POST', '/api/auth/login', { json: { email: 'tokens@example.com', password: 'Brand-New-Pass-7' } });
    const sessionId = (await t.gatehouse.getSession(new Request('http://localhost:3000/', { headers: { cookie: cookieFrom(login, SESSION)! } })))!.session.id;
    t.clock.advance(24 * HOUR_MS + 1000);
    expect((await t.gatehouse.sweep()).sessions).toBe(1);
    expect(await t.gatehouse.stores.sessions.findSessionWithUser(sessionId)).toBeNull();
  });
});

describeEachDialect('the provider callback', (dialect: Dialect) => {
  let t: TestGatehouse;
  afterEach(async () => {
    await t.close();
  });

  let nextId = 5000;
  const gitHubUser = (login: string) => fake.setUser({ id: (nextId += 1), login, emails: [{ email: `${login}@example.com`, primary: true, verified: true }] });
  const start = async (ip?: string) => {
    const response = await t.request('GET', '/api/auth/oauth/github', { ip });
    expect(response.status).toBe(302);
    const name = response.headers
      .getSetCookie()
      .map((header) => header.split('=')[0]!)
      .find((cookie) => cookie.startsWith(`${PENDING}_`))!;
    return { location: response.headers.get('location')!, cookie: cookieFrom(response, name)! };
  };
  const callback = (url: URL, cookie: string | undefined, ip?: string) =>
    t.request('GET', `${url.pathname}${url.search}`, { ...(cookie ? { cookie } : {}), ip });
  const loginPageError = (response: Response) => {
    expect(response.status).toBe(302);
    const url = new URL(response.headers.get('location')!, 'http://localhost:3000');
    expect(url.pathname).toBe('/login');
    return url.searchParams.get('error');
  };
  const tokenRequests = () => fake.requests.filter((r) => r.path === TOKEN_PATH).length;
  const lastFailure = async () => (await t.gatehouse.stores.audit.listRecentEvents(50)).find((e) => e.type === 'login_failure');

  test('a pending sign-in is accepted once: a replayed callback with a copy of the cookie is invalid_state, with no token request', async () => {
    t = await createTestGatehouse(dialect, { env: oauthEnv() });
    gitHubUser('once');
    const started = await start();
    const back = await fake.authorize(started.location, { login: 'once' });
    const first = await callback(back, started.cookie);
    expect(first.headers.get('location')).toBe('/dashboard');
    expect(cookieFrom(first, SESSION)).toBeDefined();

    const before = tokenRequests();
    const replay = await callback(back, started.cookie);
    expect(loginPageError(replay)).toBe('invalid_state');
    expect(cookieFrom(replay, SESSION)).toBeUndefined();
    expect(tokenRequests()).toBe(before);
    expect(await lastFailure()).toMatchObject({ metadata: { method: 'oauth', error: 'invalid_state', reason: 'replayed', security: true } });
  });

  test('the record of a used sign-in is kept in the database until the sign-in has expired, then swept', async () => {
    t = await createTestGatehouse(dialect, { env: oauthEnv() });
    gitHubUser('shared');
    const started = await start();
    const back = await fake.authorize(started.location, { login: 'shared' });
    expect((await callback(back, started.cookie)).headers.get('location')).toBe('/dashboard');
    expect(await t.gatehouse.sweep()).toMatchObject({ consumedSignIns: 0 });
    t.clock.advance(10 * 60 * 1000);
    expect(await t.gatehouse.sweep()).toMatchObject({ consumedSignIns: 1 });
    // Once expired, the pending sign-in itself is refused as expired.
    expect(loginPageError(await callback(back, started.cookie))).toBe('invalid_state');
    expect(await lastFailure()).toMatchObject({ metadata: { reason: 'expired' } });
  });

  test('RATE_LIMIT_OAUTH_CALLBACK: a refused callback lands on the login page as oauth_failed, audited rate_limited, with no token request', async () => {
    t = await createTestGatehouse(dialect, { env: oauthEnv({ RATE_LIMIT_OAUTH_CALLBACK: '2/15m' }) });
    gitHubUser('limited');
    const stray = new URL('http://localhost:3000/api/auth/callback/github?code=x&state=y');
    expect(loginPageError(await callback(stray, undefined))).toBe('invalid_state');
    expect(loginPageError(await callback(stray, undefined))).toBe('invalid_state');

    const started = await start();
    const back = await fake.authorize(started.location, { login: 'limited' });
    const before = tokenRequests();
    const refused = await callback(back, started.cookie);
    expect(loginPageError(refused)).toBe('oauth_failed');
    expect(cookieFrom(refused, SESSION)).toBeUndefined();
    expect(tokenRequests()).toBe(before);
    expect(await lastFailure()).toMatchObject({ metadata: { method: 'oauth', error: 'oauth_failed', reason: 'rate_limited' } });

    // Counted per client IP: another address is served.
    const other = await start('198.51.100.7');
    const otherBack = await fake.authorize(other.location, { login: 'limited' });
    expect((await callback(otherBack, other.cookie, '198.51.100.7')).headers.get('location')).toBe('/dashboard');

    // The refused sign-in was not consumed; after the window a new one is served.
    t.clock.advance(15 * 60 * 1000);
    const again = await start();
    const againBack = await fake.authorize(again.location, { login: 'limited' });
    expect((await callback(againBack, again.cookie)).headers.get('location')).toBe('/dashboard');
  });
});

describeEachDialect('the server', (dialect: Dialect) => {
  const serverConfig = (env: Record<string, string> = {}) =>
    loadConfig({ JWT_SECRET: TEST_JWT_SECRET, BCRYPT_ROUNDS: '4', PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'silent', ...env });
  const capturingLogger = (lines: string[]) => createLogger({ level: 'warn', destination: { write: (line: string) => void lines.push(line) } });

  test('sweeps once at start: an audit row past retention is gone without waiting for the hour', async () => {
    const { database, drop } = await openTestDatabase(dialect);
    const clock = new MockClock(Date.UTC(2026, 10, 22, 12, 0, 0));
    await migrateToLatest(database);
    const stores = createStores(database.kysely, database.dialect);
    const event = { type: 'config_updated', userId: null, ip: null, userAgent: null, metadata: {} } as const;
    await stores.audit.recordEvent({ ...event, at: new Date(clock.now().getTime() - 366 * DAY_MS) });
    await stores.audit.recordEvent({ ...event, at: new Date(clock.now().getTime() - 364 * DAY_MS) });
    const server = await startServer(serverConfig(), { clock, database, logger: capturingLogger([]) });
    try {
      await vi.waitFor(async () => expect(await stores.audit.listRecentEvents(10)).toHaveLength(1));
    } finally {
      await server.stop();
      await drop();
    }
  });

  test('a failed sweep logs a warning and the server keeps answering', async () => {
    const { database, drop } = await openTestDatabase(dialect);
    await migrateToLatest(database);
    await sql`drop table oauth_consumed_sign_ins`.execute(database.kysely);
    const lines: string[] = [];
    const clock = new MockClock(Date.UTC(2026, 10, 22, 12, 0, 0));
    const server = await startServer(serverConfig({ MIGRATE_ON_START: 'false' }), { clock, database, logger: capturingLogger(lines) });
    try {
      await vi.waitFor(() => expect(lines.join('')).toContain('could not sweep expired rows'));
      expect((await fetch(`${server.url}/healthz`)).status).toBe(200);
    } finally {
      await server.stop();
      await drop();
    }
  });
});
