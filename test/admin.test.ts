/**
 * The operators' admin API (DESIGN §9.6), through HTTP on every available database: off without
 * ADMIN_API_KEY, the bearer key and its rate limit, users paged by cursor, disable (no sign-in by
 * any method, sessions gone at once) and enable, revoking sessions, lifting a login lock,
 * deletion, and the audit trail with its filters and pages.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, afterEach, beforeAll, beforeEach, expect, test } from 'vitest';
import { loadConfig } from '../src/config.js';
import { startFakeGitHub, type FakeGitHub } from './support/fake-github.js';
import { STRONG_PASSWORD, cookieFrom, createTestGatehouse, describeEachDialect, type TestGatehouse } from './support/harness.js';
import { totp } from './support/totp-oracle.js';

const SESSION = 'gatehouse_session';
const CHALLENGE = 'gatehouse_mfa';
const KEY = 'admin-key-for-tests-0123456789-abcdefghij';
const ENCRYPTION_KEY = randomBytes(32).toString('base64');

let fake: FakeGitHub;
beforeAll(async () => {
  fake = await startFakeGitHub();
});
afterAll(async () => {
  await fake.close();
});

test('ADMIN_API_KEY shorter than 32 characters stops the start, naming the variable', () => {
  expect(() => loadConfig({ ADMIN_API_KEY: 'short-key' })).toThrow(/ADMIN_API_KEY: must be at least 32 characters/);
  expect(loadConfig({ ADMIN_API_KEY: KEY }).adminApiKey).toBe(KEY);
  expect(loadConfig({}).adminApiKey).toBeNull();
});

describeEachDialect('admin API (DESIGN §9.6)', (dialect) => {
  let t: TestGatehouse;
  const env = (extra: Record<string, string> = {}) => ({
    ADMIN_API_KEY: KEY,
    RATE_LIMIT_LOGIN: '1000/15m',
    RATE_LIMIT_REGISTER: '1000/15m',
    RATE_LIMIT_MFA_VERIFY: '1000/15m',
    RATE_LIMIT_ADMIN: '1000/1m',
    ENCRYPTION_KEY_BASE64: ENCRYPTION_KEY,
    GITHUB_CLIENT_ID: fake.clientId,
    GITHUB_CLIENT_SECRET: fake.clientSecret,
    GITHUB_AUTH_URL: fake.authUrl,
    GITHUB_API_URL: fake.apiUrl,
    AUTH_SECRET: 'test-auth-secret-0123456789',
    ...extra,
  });
  beforeEach(async () => {
    t = await createTestGatehouse(dialect, { env: env() });
  });
  afterEach(async () => {
    await t.close();
  });

  const admin = (method: string, path: string, options: { key?: string | null; ip?: string; headers?: Record<string, string> } = {}) =>
    t.request(method, `/api/admin${path}`, {
      ip: options.ip ?? '192.0.2.50',
      headers: { ...(options.key === null ? {} : { authorization: `Bearer ${options.key ?? KEY}` }), 'user-agent': 'ops-script/1.0', ...options.headers },
    });
  const json = async (response: Response, status = 200) => {
    const body = await response.json();
    expect([response.status, body]).toEqual([status, expect.anything()]);
    return body;
  };
  const register = async (email: string) => {
    const response = await t.request('POST', '/api/auth/register', { json: { email, password: STRONG_PASSWORD } });
    expect(response.status).toBe(201);
    return { id: (await t.gatehouse.stores.users.findUserByEmail(email))!.id, cookie: cookieFrom(response, SESSION)! };
  };
  const login = (email: string, password = STRONG_PASSWORD) => t.request('POST', '/api/auth/login', { json: { email, password } });
  const sessionStatus = async (cookie: string) => (await t.request('GET', '/api/auth/session', { cookie })).status;
  const errorOf = async (response: Response) => [response.status, (await response.json()).error];

  test('off without ADMIN_API_KEY: every /api/admin/* answers 404 exactly like an unknown route', async () => {
    const off = await createTestGatehouse(dialect, { env: { RATE_LIMIT_ADMIN: '1/1m' } });
    try {
      for (const [method, path] of [
        ['GET', '/api/admin/users'],
        ['GET', '/api/admin/audit'],
        ['POST', '/api/admin/users/00000000-0000-4000-8000-000000000000/disable'],
        ['DELETE', '/api/admin/users/00000000-0000-4000-8000-000000000000'],
        ['GET', '/api/admin/users'],
      ] as const) {
        const response = await off.request(method, path, { headers: { authorization: `Bearer ${KEY}` } });
        const unknown = await off.request(method, path.replace('/api/admin', '/api/nothing-here'));
        expect(response.status).toBe(404);
        expect(await response.json()).toEqual({ error: 'not_found', message: `No route for ${method} ${path}.` });
        expect(unknown.status).toBe(404);
        expect(response.headers.get('www-authenticate')).toBeNull();
      }
    } finally {
      await off.close();
    }
  });

  test('a missing, malformed or wrong key is 401 admin_unauthorized; each is counted, and past RATE_LIMIT_ADMIN it is 429 with Retry-After', async () => {
    await t.close();
    t = await createTestGatehouse(dialect, { env: env({ RATE_LIMIT_ADMIN: '5/1m' }) });
    expect(await errorOf(await admin('GET', '/users', { key: null }))).toEqual([401, 'admin_unauthorized']);
    expect(await errorOf(await admin('GET', '/users', { key: `${KEY}x` }))).toEqual([401, 'admin_unauthorized']);
    expect(await errorOf(await admin('GET', '/users', { key: KEY.slice(0, -1) }))).toEqual([401, 'admin_unauthorized']);
    const basic = await admin('GET', '/users', { key: null, headers: { authorization: `Basic ${Buffer.from(`x:${KEY}`).toString('base64')}` } });
    expect(await errorOf(basic)).toEqual([401, 'admin_unauthorized']);
    expect(basic.headers.get('www-authenticate')).toMatch(/^Bearer/);
    expect((await admin('GET', '/users')).status).toBe(200);
    const refused = await admin('GET', '/users', { key: 'wrong-key-wrong-key-wrong-key-wrong-key' });
    expect(await errorOf(refused)).toEqual([429, 'rate_limited']);
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
    // Even the right key, from that IP, until the window ends; another IP is counted apart.
    expect((await admin('GET', '/users')).status).toBe(429);
    expect((await admin('GET', '/users', { ip: '192.0.2.51' })).status).toBe(200);
    t.clock.advance(60_000);
    expect((await admin('GET', '/users')).status).toBe(200);
  });

  test('a browser on another site cannot use it: the preflight never allows Authorization, and a cross-site POST is refused by origin', async () => {
    await t.close();
    t = await createTestGatehouse(dialect, { env: env({ TRUSTED_ORIGINS: 'https://app.example.com' }) });
    const preflight = await t.request('OPTIONS', '/api/admin/users', {
      headers: { origin: 'https://app.example.com', 'access-control-request-method': 'GET', 'access-control-request-headers': 'authorization' },
    });
    expect(preflight.headers.get('access-control-allow-headers') ?? '').not.toMatch(/authorization/i);
    const evil = await t.request('OPTIONS', '/api/admin/users', {
      headers: { origin: 'https://evil.example', 'access-control-request-method': 'GET', 'access-control-request-headers': 'authorization' },
    });
    expect(evil.headers.get('access-control-allow-origin')).toBeNull();
    const { id } = await register('ana@example.com');
    const crossSite = await admin('POST', `/users/${id}/disable`, { headers: { origin: 'https://evil.example' } });
    expect(await errorOf(crossSite)).toEqual([403, 'forbidden_origin']);
    expect((await t.gatehouse.stores.users.findUserById(id))!.disabledAt).toBeNull();
  });

  test('users: search by email substring or id, a stable order, pages by an opaque cursor over more than a page', async () => {
    const ids: string[] = [];
    for (let i = 0; i < 7; i++) {
      ids.push((await register(`user${i}@example.com`)).id);
      t.clock.advance(1000);
    }
    await register('a_b@example.org');
    await register('axb@example.org');
    const seen: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const body = await json(await admin('GET', `/users?query=EXAMPLE.COM&limit=3${cursor ? `&cursor=${cursor}` : ''}`));
      expect(body.users.length).toBeLessThanOrEqual(3);
      seen.push(...body.users.map((user: { id: string }) => user.id));
      cursor = body.nextCursor;
      pages++;
    } while (cursor !== null);
    expect(pages).toBe(3);
    expect(seen).toEqual(ids);
    const first = (await json(await admin('GET', '/users?limit=1'))).users[0];
    expect(first).toEqual({
      id: ids[0],
      email: 'user0@example.com',
      emailVerified: false,
      hasPassword: true,
      createdAt: expect.any(String),
      lastLoginAt: null,
      disabledAt: null,
    });
    expect(JSON.stringify(await json(await admin('GET', '/users')))).not.toMatch(/\$2[aby]\$/);
    // `%` and `_` are plain characters in a query, not wildcards.
    expect((await json(await admin('GET', '/users?query=a_b'))).users.map((u: { email: string }) => u.email)).toEqual(['a_b@example.org']);
    expect((await json(await admin('GET', '/users?query=%25'))).users).toEqual([]);
    expect((await json(await admin('GET', `/users?query=${ids[3]}`))).users.map((u: { id: string }) => u.id)).toEqual([ids[3]]);
    expect((await json(await admin('GET', '/users?limit=100'))).users).toHaveLength(9);
    for (const bad of [
      'limit=0',
      'limit=101',
      'limit=ten',
      'limit=-1',
      'cursor=not-a-cursor',
      `cursor=${Buffer.from('[1,"x"]').toString('base64url')}`,
      'query=ana%00',
      'query=%01',
      'query=a%1Bb',
      'query=%7F',
      // Only control characters: refused too, not trimmed to an empty search that lists everyone.
      'query=%0A',
      'query=%0D%0A',
      'query=%09',
    ]) {
      const response = await admin('GET', `/users?${bad}`);
      expect(await errorOf(response)).toEqual([400, 'validation_error']);
    }
  });

  test('show: sessions, providers, two-factor, lock state; 404 for an unknown id or one of another form', async () => {
    const { id, cookie } = await register('ana@example.com');
    await t.gatehouse.stores.users.markEmailVerified(id);
    expect((await login('ana@example.com')).status).toBe(200);
    const { secret } = await (await t.request('POST', '/api/auth/2fa/totp/setup', { cookie, json: { currentPassword: STRONG_PASSWORD } })).json();
    expect((await t.request('POST', '/api/auth/2fa/totp/enable', { cookie, json: { code: totp(secret, t.clock.now().getTime()) } })).status).toBe(200);
    // Turning on two-factor sign-in ended the other session; a code sign-in adds one.
    const challenge = cookieFrom(await login('ana@example.com'), 'gatehouse_mfa')!;
    t.clock.advance(30_000);
    expect((await t.request('POST', '/api/auth/2fa/verify', { cookie: challenge, json: { code: totp(secret, t.clock.now().getTime()) } })).status).toBe(200);
    const { user } = await json(await admin('GET', `/users/${id}`));
    expect(user).toMatchObject({
      id,
      email: 'ana@example.com',
      emailVerified: true,
      hasPassword: true,
      disabledAt: null,
      sessions: 2,
      providers: [],
      twoFactor: { enabled: true, recoveryCodesLeft: 10 },
      passkeys: 0,
      lockedForSeconds: null,
    });
    expect(await errorOf(await admin('GET', '/users/00000000-0000-4000-8000-000000000000'))).toEqual([404, 'not_found']);
    expect(await errorOf(await admin('GET', '/users/not-an-id%00'))).toEqual([404, 'not_found']);
    expect(await errorOf(await admin('POST', '/users/ana@example.com/disable'))).toEqual([404, 'not_found']);
  });

  test('disable: sessions dead at once; password 403 account_disabled only with the right password; email sign-in 403; audited with actor admin; enable lets them in again', async () => {
    const { id, cookie } = await register('ana@example.com');
    // Verified: an email sign-in to an unverified account would remove its password (pre-hijacking defence).
    await t.gatehouse.stores.users.markEmailVerified(id);
    const second = cookieFrom(await login('ana@example.com'), SESSION)!;
    const disabled = await json(await admin('POST', `/users/${id}/disable`));
    expect(disabled).toEqual({ user: expect.objectContaining({ id, disabledAt: t.clock.now().toISOString() }), sessionsRevoked: 2 });
    expect(await sessionStatus(cookie)).toBe(401);
    expect(await sessionStatus(second)).toBe(401);

    expect(await errorOf(await login('ana@example.com', 'Wrong-Password-1'))).toEqual([401, 'invalid_credentials']);
    const refused = await login('ana@example.com');
    expect(await refused.json()).toEqual({ error: 'account_disabled', message: expect.stringMatching(/disabled/) });
    expect(refused.status).toBe(403);
    expect(cookieFrom(refused, SESSION)).toBeUndefined();

    // Email sign-in: the link is still mailed (the request answers alike for every address), but it signs nobody in.
    expect((await t.request('POST', '/api/auth/email-sign-in/request', { json: { email: 'ana@example.com' } })).status).toBe(200);
    await t.gatehouse.deliverQueuedEmails();
    const code = /code on the sign-in page: (\d{6})\b/.exec(t.sentEmails.at(-1)!.text)![1];
    const byEmail = await t.request('POST', '/api/auth/email-sign-in/verify', { json: { email: 'ana@example.com', code } });
    expect(await errorOf(byEmail)).toEqual([403, 'account_disabled']);

    // Disabling twice keeps the first time.
    t.clock.advance(5000);
    expect((await json(await admin('POST', `/users/${id}/disable`))).user.disabledAt).toBe(disabled.user.disabledAt);
    expect((await json(await admin('GET', `/users/${id}`))).user.disabledAt).toBe(disabled.user.disabledAt);

    expect(await json(await admin('POST', `/users/${id}/enable`))).toEqual({ user: expect.objectContaining({ id, disabledAt: null }) });
    const back = await login('ana@example.com');
    expect(back.status).toBe(200);
    expect(await sessionStatus(cookieFrom(back, SESSION)!)).toBe(200);

    const { events } = await json(await admin('GET', `/audit?userId=${id}`));
    const adminEvents = events.filter((event: { type: string }) => event.type.startsWith('admin_'));
    expect(adminEvents.map((event: { type: string }) => event.type)).toEqual(['admin_user_enabled', 'admin_user_disabled', 'admin_user_disabled']);
    expect(adminEvents.at(-1)).toMatchObject({ userId: id, ip: '192.0.2.50', userAgent: 'ops-script/1.0', metadata: { actor: 'admin', sessionsRevoked: 2 } });
    expect(events.find((event: { type: string; metadata: { reason?: string } }) => event.metadata.reason === 'account_disabled')).toMatchObject({
      type: 'login_failure',
      userId: id,
    });
  });

  test('disable: a session issued by any flow is refused at the source (the backstop in issueSession), and the session check refuses a disabled user', async () => {
    const { id, cookie } = await register('ana@example.com');
    // A session made behind the flows' backs (a sign-in that raced the disable) is refused by the check.
    await t.gatehouse.stores.users.markEmailVerified(id);
    await t.database.kysely.updateTable('users').set({ disabled_at: t.clock.now().getTime() }).where('id', '=', id).execute();
    expect(await sessionStatus(cookie)).toBe(401);
    const { issueSession } = await import('../src/session/flow.js');
    const { createSessionTokenCodec } = await import('../src/session/token.js');
    const deps = { sessions: t.gatehouse.stores.sessions, tokens: createSessionTokenCodec('x'.repeat(40)), sessionExpiresInSeconds: 3600 };
    await expect(issueSession(deps, id, { now: t.clock.now(), ip: null, userAgent: null }, ['password'])).rejects.toMatchObject({
      code: 'account_disabled',
      status: 403,
    });
    const rows = await t.database.kysely.selectFrom('sessions').select('id').where('user_id', '=', id).execute();
    expect(rows).toHaveLength(1); // the registration's, revoked only by an operator's disable
  });

  test('disable: the GitHub callback lands on the login page with error=account_disabled, before any second factor; no session', async () => {
    const github = { id: 4242, login: 'octo', emails: [{ email: 'octo@example.com', primary: true, verified: true }] };
    fake.setUser(github);
    const signIn = async () => {
      const started = await t.request('GET', '/api/auth/oauth/github');
      const pending = started.headers
        .getSetCookie()
        .map((header) => header.split(';')[0]!)
        .find((pair) => pair.startsWith('gatehouse_oauth_'))!;
      const callback = await fake.authorize(started.headers.get('location')!, { login: 'octo' });
      return t.request('GET', `${callback.pathname}${callback.search}`, { cookie: pending });
    };
    const first = await signIn();
    expect(first.status).toBe(302);
    const user = (await t.gatehouse.stores.users.findUserByEmail('octo@example.com'))!;
    await json(await admin('POST', `/users/${user.id}/disable`));
    const refused = await signIn();
    expect(refused.status).toBe(302);
    const location = new URL(refused.headers.get('location')!, 'http://localhost:3000');
    expect([location.pathname, location.searchParams.get('error')]).toEqual(['/login', 'account_disabled']);
    expect(cookieFrom(refused, SESSION)).toBeUndefined();
    // In the trail, keyed to the account, like every sign-in to a disabled account.
    const refusal = (await t.gatehouse.stores.audit.listRecentEvents(10)).find((event) => event.type === 'login_failure');
    expect(refusal).toMatchObject({
      userId: user.id,
      metadata: { method: 'oauth', provider: 'github', error: 'account_disabled', reason: 'account_disabled' },
    });
    const page = await t.request('GET', `${location.pathname}${location.search}`);
    expect(await page.text()).toContain('This account is disabled.');
    expect((await json(await admin('GET', `/users/${user.id}`))).user).toMatchObject({ sessions: 0, providers: [{ provider: 'github', login: 'octo' }] });
  });

  test('disable: the second step of a 2FA sign-in is refused (no code is checked), and a disabled user never reaches it', async () => {
    const { id, cookie } = await register('ana@example.com');
    await t.gatehouse.stores.users.markEmailVerified(id);
    const { secret } = await (await t.request('POST', '/api/auth/2fa/totp/setup', { cookie, json: { currentPassword: STRONG_PASSWORD } })).json();
    expect((await t.request('POST', '/api/auth/2fa/totp/enable', { cookie, json: { code: totp(secret, t.clock.now().getTime()) } })).status).toBe(200);
    const first = await login('ana@example.com');
    expect(await first.json()).toMatchObject({ mfaRequired: true });
    const challenge = cookieFrom(first, CHALLENGE)!;
    await json(await admin('POST', `/users/${id}/disable`));
    t.clock.advance(30_000);
    const verify = await t.request('POST', '/api/auth/2fa/verify', { cookie: challenge, json: { code: totp(secret, t.clock.now().getTime()) } });
    expect(await errorOf(verify)).toEqual([403, 'account_disabled']);
    expect(cookieFrom(verify, SESSION)).toBeUndefined();
    // The refusal is in the trail like any other sign-in to a disabled account.
    expect((await t.gatehouse.stores.audit.listRecentEvents(1))[0]).toMatchObject({
      type: 'login_failure',
      userId: id,
      metadata: { email: 'ana@example.com', method: 'password+totp', reason: 'account_disabled' },
    });
    expect(await errorOf(await login('ana@example.com'))).toEqual([403, 'account_disabled']);
  });

  test('password reset of a disabled account still works (the owner keeps control of the password), but sign-in stays refused', async () => {
    await register('ana@example.com');
    const id = (await t.gatehouse.stores.users.findUserByEmail('ana@example.com'))!.id;
    await json(await admin('POST', `/users/${id}/disable`));
    expect((await t.request('POST', '/api/auth/password-reset/request', { json: { email: 'ana@example.com' } })).status).toBe(200);
    await t.gatehouse.deliverQueuedEmails();
    const token = decodeURIComponent(/token=(\S+)/.exec(t.sentEmails.at(-1)!.text)![1]!);
    const confirmed = await t.request('POST', '/api/auth/password-reset/confirm', { json: { token, password: 'Another-Horse-7' } });
    expect(confirmed.status).toBe(200);
    expect(await errorOf(await login('ana@example.com', 'Another-Horse-7'))).toEqual([403, 'account_disabled']);
  });

  test('revoke-sessions ends every session of the user and no one else’s; audited', async () => {
    const ana = await register('ana@example.com');
    const bo = await register('bo@example.com');
    const second = cookieFrom(await login('ana@example.com'), SESSION)!;
    expect(await json(await admin('POST', `/users/${ana.id}/revoke-sessions`))).toEqual({ sessionsRevoked: 2 });
    expect([await sessionStatus(ana.cookie), await sessionStatus(second), await sessionStatus(bo.cookie)]).toEqual([401, 401, 200]);
    expect((await login('ana@example.com')).status).toBe(200);
    const { events } = await json(await admin('GET', '/audit?type=admin_sessions_revoked'));
    expect(events).toEqual([expect.objectContaining({ userId: ana.id, metadata: { actor: 'admin', sessionsRevoked: 2 } })]);
  });

  test('unlock lifts the login lock of the email: 429 account_locked → unlock → the right password signs in', async () => {
    const { id } = await register('ana@example.com');
    for (let i = 0; i < 5; i++) await login('ana@example.com', 'Wrong-Password-1');
    expect(await errorOf(await login('ana@example.com'))).toEqual([429, 'account_locked']);
    expect((await json(await admin('GET', `/users/${id}`))).user.lockedForSeconds).toBeGreaterThan(0);
    expect(await json(await admin('POST', `/users/${id}/unlock`))).toEqual({ wasLocked: true });
    expect((await json(await admin('GET', `/users/${id}`))).user.lockedForSeconds).toBeNull();
    // The IP counted the failures too: the owner signs in from elsewhere.
    const response = await t.request('POST', '/api/auth/login', { json: { email: 'ana@example.com', password: STRONG_PASSWORD }, ip: '198.51.100.7' });
    expect(response.status).toBe(200);
    expect(await json(await admin('POST', `/users/${id}/unlock`))).toEqual({ wasLocked: false });
    const { events } = await json(await admin('GET', `/audit?type=admin_user_unlocked&userId=${id}`));
    expect(events.map((event: { metadata: unknown }) => event.metadata)).toEqual([
      { actor: 'admin', wasLocked: false },
      { actor: 'admin', wasLocked: true },
    ]);
  });

  test('delete removes the user and everything of it; the audit rows stay, without the address; then 404', async () => {
    const { id, cookie } = await register('ana@example.com');
    expect(await json(await admin('DELETE', `/users/${id}`))).toEqual({ deleted: true });
    expect(await sessionStatus(cookie)).toBe(401);
    expect(await t.gatehouse.stores.users.findUserById(id)).toBeNull();
    expect(await errorOf(await admin('DELETE', `/users/${id}`))).toEqual([404, 'not_found']);
    expect(await errorOf(await admin('GET', `/users/${id}`))).toEqual([404, 'not_found']);
    const { events } = await json(await admin('GET', `/audit?userId=${id}`));
    expect(events[0]).toMatchObject({ type: 'admin_user_deleted', userId: id, metadata: { actor: 'admin' } });
    expect(events.map((event: { type: string }) => event.type)).toContain('user_created');
    expect(JSON.stringify(events)).not.toContain('ana@example.com');
    expect((await register('ana@example.com')).id).not.toBe(id);
  });

  test('audit: filters by user, type and time (ISO), pages newest first by cursor; bad values are 400 validation_error', async () => {
    const start = t.clock.now();
    const ana = await register('ana@example.com');
    t.clock.advance(60_000);
    const middle = t.clock.now();
    for (let i = 0; i < 4; i++) {
      await login('ana@example.com', 'Wrong-Password-1');
      t.clock.advance(1000);
    }
    await register('bo@example.com');
    const failures = await json(await admin('GET', `/audit?userId=${ana.id}&type=login_failure`));
    expect(failures.events).toHaveLength(4);
    expect(failures.events.every((event: { type: string; userId: string }) => event.type === 'login_failure' && event.userId === ana.id)).toBe(true);
    const sinceMiddle = await json(await admin('GET', `/audit?since=${encodeURIComponent(middle.toISOString())}`));
    expect(sinceMiddle.events.map((event: { type: string }) => event.type)).toEqual([
      'user_created',
      'login_failure',
      'login_failure',
      'login_failure',
      'login_failure',
    ]);
    const untilStart = await json(await admin('GET', `/audit?until=${encodeURIComponent(start.toISOString())}`));
    expect(untilStart.events).toEqual([expect.objectContaining({ type: 'user_created', userId: ana.id, at: start.toISOString() })]);
    const ids: number[] = [];
    let cursor: string | null = null;
    do {
      const page = await json(await admin('GET', `/audit?limit=2${cursor ? `&cursor=${cursor}` : ''}`));
      ids.push(...page.events.map((event: { id: number }) => event.id));
      cursor = page.nextCursor;
    } while (cursor !== null);
    expect(ids).toHaveLength(6);
    expect([...ids].sort((a, b) => b - a)).toEqual(ids);
    for (const bad of [
      'since=yesterday',
      'until=2026-13-45T00:00:00Z',
      // Days that are not in their month: Date.parse would roll them into the next one.
      'since=2026-02-30',
      'since=2026-02-29T10:00:00Z',
      'until=2026-04-31T00:00Z',
      'userId=nope',
      'type=DROP%20TABLE',
      'limit=500',
      'cursor=abc',
      `since=${encodeURIComponent(middle.toISOString())}&until=${encodeURIComponent(start.toISOString())}`,
    ]) {
      expect(await errorOf(await admin('GET', `/audit?${bad}`))).toEqual([400, 'validation_error']);
    }
  });

  test('audit: newest first by time, then id, when rows were written out of time order (a refusal summary); every page by cursor, with a filter too', async () => {
    const t0 = t.clock.now().getTime() + 3_600_000;
    const record = (type: 'logout' | 'login_success', seconds: number) =>
      t.gatehouse.stores.audit.recordEvent({ type, userId: null, ip: null, userAgent: null, metadata: { seconds }, at: new Date(t0 + seconds * 1000) });
    // Written in this order, so their ids rise in it; their times do not.
    for (const [type, seconds] of [
      ['logout', 3],
      ['login_success', 1],
      ['logout', 2],
      ['logout', 2],
      ['login_success', 4],
    ] as const)
      await record(type, seconds);
    const walk = async (query: string) => {
      const seen: { id: number; seconds: number }[] = [];
      let cursor: string | null = null;
      do {
        const page = await json(
          await admin('GET', `/audit?since=${encodeURIComponent(new Date(t0).toISOString())}&limit=1${query}${cursor ? `&cursor=${cursor}` : ''}`),
        );
        seen.push(...page.events.map((event: { id: number; metadata: { seconds: number } }) => ({ id: event.id, seconds: event.metadata.seconds })));
        cursor = page.nextCursor;
      } while (cursor !== null);
      return seen;
    };
    const all = await walk('');
    expect(all.map((event) => event.seconds)).toEqual([4, 3, 2, 2, 1]);
    // Two rows at one instant: the newer id first, across a page's edge.
    expect(all[2]!.id).toBeGreaterThan(all[3]!.id);
    expect((await walk('&type=logout')).map((event) => event.seconds)).toEqual([3, 2, 2]);
    // A cursor of the earlier order (the last id alone) is not one of this list.
    const stale = Buffer.from(JSON.stringify([all[0]!.id])).toString('base64url');
    expect(await errorOf(await admin('GET', `/audit?cursor=${stale}`))).toEqual([400, 'validation_error']);
  });
});
