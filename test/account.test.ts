import { randomUUID } from 'node:crypto';
import { afterEach, beforeEach, expect, test } from 'vitest';
import { createHashPool } from '../src/credentials/hash-pool.js';
import { createBcryptHasher } from '../src/credentials/hasher.js';
import { issueSession } from '../src/session/flow.js';
import { createSessionTokenCodec } from '../src/session/token.js';
import {
  STRONG_PASSWORD,
  TEST_JWT_SECRET,
  cookieFrom,
  createTestGatehouse,
  describeEachDialect,
  setCookieHeader,
  type TestGatehouse,
} from './support/harness.js';

const COOKIE = 'gatehouse_session';
const NEW_PASSWORD = 'Brand-New-Pass-7';
const MINUTE = 60_000;

describeEachDialect('account self-service (DESIGN §9.2)', (dialect) => {
  let t: TestGatehouse;
  let cookie: string;
  beforeEach(async () => {
    t = await createTestGatehouse(dialect, {
      env: { NODE_ENV: 'development', RATE_LIMIT_LOGIN: '1000/15m', RATE_LIMIT_REGISTER: '100/15m', RATE_LIMIT_VERIFY_EMAIL: '100/15m' },
    });
    cookie = cookieFrom(await register('ana@example.com'), COOKIE)!;
  });
  afterEach(async () => {
    await t.close();
  });

  function register(email: string, ip = '203.0.113.10'): Promise<Response> {
    return t.request('POST', '/api/auth/register', { json: { email, password: STRONG_PASSWORD }, ip, headers: { 'user-agent': 'Registering/1.0' } });
  }
  async function login(email: string, password = STRONG_PASSWORD, ip = '203.0.113.10', userAgent = 'Firefox/140'): Promise<Response> {
    return t.request('POST', '/api/auth/login', { json: { email, password }, ip, headers: { 'user-agent': userAgent } });
  }
  const as = (sessionCookie: string) => ({
    get: (path: string) => t.request('GET', `/api/auth${path}`, { cookie: sessionCookie }),
    post: (path: string, json?: unknown) => t.request('POST', `/api/auth${path}`, { cookie: sessionCookie, ...(json === undefined ? {} : { json }) }),
    // A DELETE that re-authenticates carries currentPassword in its body.
    delete: (path: string, json?: unknown) => t.request('DELETE', `/api/auth${path}`, { cookie: sessionCookie, ...(json === undefined ? {} : { json }) }),
  });
  async function sent(): Promise<{ to: string; subject: string; text: string }[]> {
    await t.gatehouse.deliverQueuedEmails();
    return t.sentEmails.splice(0);
  }
  async function auditTypes(): Promise<string[]> {
    return (await t.gatehouse.stores.audit.listRecentEvents(100)).map((event) => event.type);
  }
  /** A user who signs in only through a provider, with a session issued `ageMs` ago. */
  async function providerOnlyUser(email: string, ageMs = 0): Promise<{ id: string; cookie: string }> {
    const id = randomUUID();
    await t.gatehouse.stores.users.createUser({ id, email, passwordHash: null, emailVerified: true, createdAt: t.clock.now() });
    await linkGitHub(id, `gh-${id}`);
    const session = await issueSession(
      { sessions: t.gatehouse.stores.sessions, tokens: createSessionTokenCodec(TEST_JWT_SECRET), sessionExpiresInSeconds: 86400 },
      id,
      { now: new Date(t.clock.now().getTime() - ageMs), ip: '192.0.2.44', userAgent: 'Provider-Only/1.0' },
      ['github'],
    );
    return { id, cookie: `${COOKIE}=${session.token}` };
  }
  async function linkGitHub(userId: string, providerAccountId: string, provider = 'github'): Promise<void> {
    const now = t.clock.now();
    await t.gatehouse.stores.accounts.createAccount({
      id: randomUUID(),
      userId,
      provider,
      providerAccountId,
      providerLogin: `login-${providerAccountId}`,
      accessTokenEnc: 'v1.k.iv.ct.tag',
      refreshTokenEnc: null,
      accessTokenExpiresAt: null,
      scope: '',
      createdAt: now,
      updatedAt: now,
    });
  }

  test('every endpoint but the email change confirm answers 401 not_authenticated without a session', async () => {
    const calls: [string, string][] = [
      ['GET', '/sessions'],
      ['DELETE', '/sessions/abc'],
      ['POST', '/sessions/revoke-others'],
      ['POST', '/password/change'],
      ['POST', '/email/change'],
      ['POST', '/account/delete'],
      ['GET', '/accounts'],
      ['DELETE', '/accounts/github'],
    ];
    for (const [method, path] of calls) {
      const response = await t.request(method, `/api/auth${path}`, { json: method === 'POST' ? { currentPassword: STRONG_PASSWORD } : undefined });
      expect([path, response.status, (await response.json()).error]).toEqual([path, 401, 'not_authenticated']);
    }
  });

  test('GET /sessions lists this user’s unexpired sessions newest first, the current one marked, with where and what they came from', async () => {
    t.clock.advance(1000);
    const second = cookieFrom(await login('ana@example.com', STRONG_PASSWORD, '198.51.100.2', 'Safari/18'), COOKIE)!;
    await register('bob@example.com');
    const response = await as(second).get('/sessions');
    expect(response.status).toBe(200);
    const { sessions } = await response.json();
    expect(sessions).toHaveLength(2);
    expect(sessions[0]).toEqual({
      id: expect.any(String),
      current: true,
      createdAt: t.clock.now().toISOString(),
      expiresAt: new Date(Math.floor(t.clock.now().getTime() / 1000) * 1000 + 86400_000).toISOString(),
      lastSeenAt: t.clock.now().toISOString(),
      ip: '198.51.100.2',
      userAgent: 'Safari/18',
      // The names read from the string, for "Safari" on the page (it names no system).
      browser: 'Safari',
      os: null,
    });
    expect(sessions[1]).toMatchObject({ current: false, ip: '203.0.113.10', userAgent: 'Registering/1.0', browser: null, os: null });
    t.clock.advance(86400_000 - 500);
    expect((await (await as(second).get('/sessions')).json()).sessions).toHaveLength(1);
  });

  test('lastSeenAt is refreshed at most once a minute, off the response path', async () => {
    const createdAt = t.clock.now().toISOString();
    const lastSeen = async () => (await (await as(cookie).get('/sessions')).json()).sessions[0].lastSeenAt;
    t.clock.advance(30_000);
    expect((await as(cookie).get('/session')).status).toBe(200);
    await t.gatehouse.deliverQueuedEmails(); // settles work off the response path
    expect(await lastSeen()).toBe(createdAt);
    t.clock.advance(31_000);
    expect((await as(cookie).get('/session')).status).toBe(200);
    await t.gatehouse.deliverQueuedEmails();
    const seenAt = t.clock.now().toISOString();
    expect(await lastSeen()).toBe(seenAt);
    t.clock.advance(20_000);
    await as(cookie).get('/session');
    await t.gatehouse.deliverQueuedEmails();
    expect(await lastSeen()).toBe(seenAt);
  });

  test('DELETE /sessions/:id ends one session; another user’s or an unknown id is 404 alike; the current one signs out', async () => {
    const other = cookieFrom(await login('ana@example.com'), COOKIE)!;
    const bob = cookieFrom(await register('bob@example.com'), COOKIE)!;
    const [bobSession] = (await (await as(bob).get('/sessions')).json()).sessions;
    const sessions = (await (await as(cookie).get('/sessions')).json()).sessions as { id: string; current: boolean }[];
    const otherId = sessions.find((s) => !s.current)!.id;
    const currentId = sessions.find((s) => s.current)!.id;

    for (const id of [bobSession.id, randomUUID(), 'x'.repeat(300)]) {
      const refused = await as(cookie).delete(`/sessions/${id}`);
      expect([refused.status, (await refused.json()).error]).toEqual([404, 'not_found']);
    }
    expect((await as(bob).get('/session')).status).toBe(200);

    const revoked = await as(cookie).delete(`/sessions/${otherId}`);
    expect(revoked.status).toBe(200);
    expect(await revoked.json()).toEqual({ ok: true });
    expect((await as(other).get('/session')).status).toBe(401);
    expect((await as(cookie).get('/session')).status).toBe(200);

    const signedOut = await as(cookie).delete(`/sessions/${currentId}`);
    expect(signedOut.status).toBe(200);
    expect(setCookieHeader(signedOut, COOKIE)).toMatch(/Max-Age=0/);
    expect((await as(cookie).get('/session')).status).toBe(401);
    expect((await auditTypes()).filter((type) => type === 'session_revoked')).toHaveLength(2);
  });

  test('POST /sessions/revoke-others ends every other session and keeps this one', async () => {
    const others = [cookieFrom(await login('ana@example.com'), COOKIE)!, cookieFrom(await login('ana@example.com'), COOKIE)!];
    const response = await as(cookie).post('/sessions/revoke-others');
    expect(await response.json()).toEqual({ revoked: 2 });
    for (const other of others) expect((await as(other).get('/session')).status).toBe(401);
    expect((await as(cookie).get('/session')).status).toBe(200);
  });

  test('POST /password/change: re-authenticates, sets the password, ends every other session, keeps this one, emails a notice, audits', async () => {
    const other = cookieFrom(await login('ana@example.com'), COOKIE)!;
    await sent();
    const missing = await as(cookie).post('/password/change', { newPassword: NEW_PASSWORD });
    expect([missing.status, (await missing.json()).error]).toEqual([403, 'reauthentication_required']);
    const wrong = await as(cookie).post('/password/change', { currentPassword: 'Not-The-Password-1', newPassword: NEW_PASSWORD });
    expect([wrong.status, (await wrong.json()).error]).toEqual([401, 'invalid_credentials']);
    expect((await as(cookie).get('/session')).status).toBe(200); // a wrong password is not a lost session

    const weak = await as(cookie).post('/password/change', { currentPassword: STRONG_PASSWORD, newPassword: 'short' });
    expect(weak.status).toBe(400);
    const weakBody = await weak.json();
    expect(weakBody.error).toBe('validation_error');
    expect(weakBody.issues.every((issue: { path: string }) => issue.path === 'newPassword')).toBe(true);

    const changed = await as(cookie).post('/password/change', { currentPassword: STRONG_PASSWORD, newPassword: NEW_PASSWORD });
    expect(changed.status).toBe(200);
    expect(typeof (await changed.json()).message).toBe('string');
    expect((await as(other).get('/session')).status).toBe(401);
    expect((await as(cookie).get('/session')).status).toBe(200);
    expect((await login('ana@example.com')).status).toBe(401);
    expect((await login('ana@example.com', NEW_PASSWORD)).status).toBe(200);
    const [notice] = await sent();
    expect(notice).toMatchObject({ to: 'ana@example.com', subject: 'Your Gatehouse password was changed' });
    expect(notice!.text).toContain('from a signed-in session');
    expect(await auditTypes()).toContain('password_changed');
    expect(JSON.stringify(await t.gatehouse.stores.audit.listRecentEvents(100))).not.toContain(NEW_PASSWORD);
  });

  test('wrong current passwords count toward the login lock of the email: the fifth locks, and login is locked too', async () => {
    for (let i = 0; i < 5; i++) {
      const wrong = await as(cookie).post('/password/change', { currentPassword: `Wrong-Guess-${i}a`, newPassword: NEW_PASSWORD });
      expect(wrong.status).toBe(401);
    }
    const locked = await as(cookie).post('/password/change', { currentPassword: STRONG_PASSWORD, newPassword: NEW_PASSWORD });
    expect([locked.status, (await locked.json()).error]).toEqual([429, 'account_locked']);
    expect(locked.headers.get('retry-after')).not.toBeNull();
    expect((await login('ana@example.com', STRONG_PASSWORD, '198.51.100.9')).status).toBe(429);
    const failures = (await t.gatehouse.stores.audit.listRecentEvents(100)).filter(
      (e) => e.type === 'login_failure' && e.metadata.method === 'reauthentication',
    );
    expect(failures).toHaveLength(5);
  });

  test('an account without a password: password change is 400 password_not_set; it re-authenticates by a sign-in under 10 minutes old', async () => {
    const fresh = await providerOnlyUser('gina@example.com', 9 * MINUTE);
    const notSet = await as(fresh.cookie).post('/password/change', { newPassword: NEW_PASSWORD });
    expect([notSet.status, (await notSet.json()).error]).toEqual([400, 'password_not_set']);

    const stale = await providerOnlyUser('hugo@example.com', 11 * MINUTE);
    const refused = await as(stale.cookie).post('/account/delete');
    expect([refused.status, (await refused.json()).error]).toEqual([403, 'reauthentication_required']);
    expect(await t.gatehouse.stores.users.findUserById(stale.id)).not.toBeNull();

    const deleted = await as(fresh.cookie).post('/account/delete');
    expect(deleted.status).toBe(200);
    expect(await t.gatehouse.stores.users.findUserById(fresh.id)).toBeNull();
  });

  test('email change: a link to the new address, a notice to the old; the change only on confirm, verified; old links die', async () => {
    await sent();
    // A reset link mailed to the old address before the change…
    const { token: resetToken } = await (await t.request('POST', '/api/auth/password-reset/request', { json: { email: 'ana@example.com' } })).json();
    const requested = await as(cookie).post('/email/change', { newEmail: ' Ana.New@Example.com ', currentPassword: STRONG_PASSWORD });
    expect(requested.status).toBe(200);
    const body = await requested.json();
    expect(body.confirmUrl).toBe(`http://localhost:3000/confirm-email-change?token=${body.token}`);
    const emails = await sent();
    const link = emails.find((email) => email.to === 'ana.new@example.com');
    expect(link?.subject).toBe('Confirm your new email address for Gatehouse');
    expect(link?.text).toContain(body.confirmUrl);
    const notice = emails.find((email) => email.to === 'ana@example.com' && email.subject.includes('change of your'));
    expect(notice?.text).toContain('ana.new@example.com');
    expect(notice?.text).not.toContain(body.token);
    expect((await (await as(cookie).get('/session')).json()).user.email).toBe('ana@example.com');

    const confirmed = await t.request('POST', '/api/auth/email/change/confirm', { cookie, json: { token: body.token } });
    expect(confirmed.status).toBe(200);
    expect((await (await as(cookie).get('/session')).json()).user).toMatchObject({ email: 'ana.new@example.com', emailVerified: true });
    expect((await login('ana@example.com')).status).toBe(401);
    expect((await login('ana.new@example.com')).status).toBe(200);
    const again = await t.request('POST', '/api/auth/email/change/confirm', { json: { token: body.token } });
    expect([again.status, (await again.json()).error]).toEqual([400, 'invalid_token']);
    // …no longer works, and the old address is told of the change.
    const reset = await t.request('POST', '/api/auth/password-reset/confirm', { json: { token: resetToken, password: NEW_PASSWORD } });
    expect([reset.status, (await reset.json()).error]).toEqual([400, 'invalid_token']);
    expect((await sent()).map((email) => [email.to, email.subject])).toContainEqual(['ana@example.com', 'Your Gatehouse email address was changed']);
    expect(await auditTypes()).toEqual(expect.arrayContaining(['email_change_requested', 'email_changed']));
  });

  test('email change refusals: 409 when taken, also when taken between request and confirm (nothing changes); a wrong or expired token is invalid_token', async () => {
    await register('bob@example.com');
    const taken = await as(cookie).post('/email/change', { newEmail: 'BOB@example.com', currentPassword: STRONG_PASSWORD });
    expect([taken.status, (await taken.json()).error]).toEqual([409, 'email_exists']);
    const same = await as(cookie).post('/email/change', { newEmail: 'ana@example.com', currentPassword: STRONG_PASSWORD });
    expect(same.status).toBe(400);
    const noPassword = await as(cookie).post('/email/change', { newEmail: 'ana2@example.com' });
    expect([noPassword.status, (await noPassword.json()).error]).toEqual([403, 'reauthentication_required']);

    const { token } = await (await as(cookie).post('/email/change', { newEmail: 'cleo@example.com', currentPassword: STRONG_PASSWORD })).json();
    await register('cleo@example.com');
    const raced = await t.request('POST', '/api/auth/email/change/confirm', { json: { token } });
    expect([raced.status, (await raced.json()).error]).toEqual([409, 'email_exists']);
    expect((await (await as(cookie).get('/session')).json()).user.email).toBe('ana@example.com');

    for (const bad of ['nope', `${token}x`, token.replace(/\..*/, '.AAAA'), 'a'.repeat(5000)]) {
      const refused = await t.request('POST', '/api/auth/email/change/confirm', { json: { token: bad } });
      expect([refused.status, (await refused.json()).error]).toEqual([400, 'invalid_token']);
    }
    const { token: later } = await (await as(cookie).post('/email/change', { newEmail: 'dora@example.com', currentPassword: STRONG_PASSWORD })).json();
    t.clock.advance(24 * 60 * MINUTE);
    const expired = await t.request('POST', '/api/auth/email/change/confirm', { json: { token: later } });
    expect([expired.status, (await expired.json()).error]).toEqual([400, 'invalid_token']);
  });

  test('RATE_LIMIT_EMAIL_CHANGE caps requests per user (each mails a link)', async () => {
    for (let i = 0; i < 5; i++) {
      expect((await as(cookie).post('/email/change', { newEmail: `n${i}@example.com`, currentPassword: STRONG_PASSWORD })).status).toBe(200);
    }
    const refused = await as(cookie).post('/email/change', { newEmail: 'n9@example.com', currentPassword: STRONG_PASSWORD });
    expect([refused.status, (await refused.json()).error]).toEqual([429, 'rate_limited']);
  });

  test('POST /account/delete: everything of the user goes in one transaction; audit rows stay without the address; the address can register again', async () => {
    // No sender: the emails to the user stay queued, and must be purged, not sent.
    await t.close();
    t = await createTestGatehouse(dialect, { env: { NODE_ENV: 'development', RATE_LIMIT_LOGIN: '1000/15m' }, overrides: { mailer: null } });
    cookie = cookieFrom(await register('ana@example.com'), COOKIE)!;
    const other = cookieFrom(await login('ana@example.com'), COOKIE)!;
    const user = (await (await as(cookie).get('/session')).json()).user as { id: string };
    await linkGitHub(user.id, 'gh-ana');
    await as(cookie).post('/email/change', { newEmail: 'pending@example.com', currentPassword: STRONG_PASSWORD });
    const wrong = await as(cookie).post('/account/delete', { currentPassword: 'Not-The-Password-1' });
    expect(wrong.status).toBe(401);
    expect(await t.gatehouse.stores.users.findUserById(user.id)).not.toBeNull();

    const deleted = await as(cookie).post('/account/delete', { currentPassword: STRONG_PASSWORD });
    expect(deleted.status).toBe(200);
    expect(setCookieHeader(deleted, COOKIE)).toMatch(/Max-Age=0/);
    for (const c of [cookie, other]) expect((await as(c).get('/session')).status).toBe(401);
    expect(await t.gatehouse.stores.users.findUserById(user.id)).toBeNull();
    expect(await t.gatehouse.stores.accounts.findAccount('github', 'gh-ana')).toBeNull();
    expect(await t.gatehouse.stores.emailChangeTokens.listPendingEmails(user.id)).toEqual([]);
    const outbox = await t.gatehouse.stores.outbox.listEmails(100);
    expect(outbox.map((email) => [email.recipient, email.status]).sort()).toEqual([
      ['ana@example.com', 'expired'],
      ['ana@example.com', 'expired'],
      ['pending@example.com', 'expired'],
    ]);
    expect((await login('ana@example.com')).status).toBe(401);

    const events = await t.gatehouse.stores.audit.listRecentEvents(100);
    const own = events.filter((event) => event.userId === user.id);
    expect(own.map((event) => event.type)).toEqual(expect.arrayContaining(['user_created', 'login_success', 'account_deleted']));
    expect(JSON.stringify(own)).not.toContain('ana@example.com');
    expect((await register('ana@example.com')).status).toBe(201);
  });

  test('linked sign-ins: list; unlink; never the last way in (409 last_sign_in_method); unknown provider 404', async () => {
    const user = (await (await as(cookie).get('/session')).json()).user as { id: string };
    expect(await (await as(cookie).get('/accounts')).json()).toEqual({ hasPassword: true, accounts: [] });
    await linkGitHub(user.id, 'gh-1');
    expect(await (await as(cookie).get('/accounts')).json()).toEqual({
      hasPassword: true,
      accounts: [{ provider: 'github', login: 'login-gh-1', linkedAt: t.clock.now().toISOString() }],
    });
    expect((await as(cookie).delete('/accounts/github')).status).toBe(403);
    expect((await as(cookie).delete('/accounts/github', { currentPassword: STRONG_PASSWORD })).status).toBe(200);
    expect((await as(cookie).delete('/accounts/github', { currentPassword: STRONG_PASSWORD })).status).toBe(404);
    expect(await auditTypes()).toContain('provider_unlinked');

    const only = await providerOnlyUser('ivo@example.com');
    const last = await as(only.cookie).delete('/accounts/github');
    expect([last.status, (await last.json()).error]).toEqual([409, 'last_sign_in_method']);
    await linkGitHub(only.id, 'gl-1', 'gitlab');
    expect((await as(only.cookie).delete('/accounts/github')).status).toBe(200);
    expect((await as(only.cookie).delete('/accounts/gitlab')).status).toBe(409);
  });

  test('two concurrent unlinks of the last two providers leave one', async () => {
    const only = await providerOnlyUser('jan@example.com');
    await linkGitHub(only.id, 'gl-2', 'gitlab');
    const answers = await Promise.all([as(only.cookie).delete('/accounts/github'), as(only.cookie).delete('/accounts/gitlab')]);
    expect(answers.map((a) => a.status).sort()).toEqual([200, 409]);
    expect(await t.gatehouse.stores.accounts.listUserAccounts(only.id)).toHaveLength(1);
  });

  test('logout is audited; a cross-site DELETE is refused before any work', async () => {
    const other = cookieFrom(await login('ana@example.com'), COOKIE)!;
    const id = (await (await as(other).get('/sessions')).json()).sessions.find((s: { current: boolean }) => s.current).id;
    const crossSite = await t.request('DELETE', `/api/auth/sessions/${id}`, { cookie, headers: { origin: 'https://evil.example' } });
    expect([crossSite.status, (await crossSite.json()).error]).toEqual([403, 'forbidden_origin']);
    expect((await as(other).get('/session')).status).toBe(200);
    expect((await as(other).post('/logout')).status).toBe(200);
    expect(await auditTypes()).toContain('logout');
  });
});

describeEachDialect('rehash on login (DESIGN §9.2)', (dialect) => {
  test('a password hashed at another cost than BCRYPT_ROUNDS is hashed again at login, off the response path; the login works before and after', async () => {
    const t = await createTestGatehouse(dialect, { env: { BCRYPT_ROUNDS: '5' } });
    try {
      // An account whose hash was made at cost 4 (BCRYPT_ROUNDS was 4 then).
      expect((await t.request('POST', '/api/auth/register', { json: { email: 'cost@example.com', password: STRONG_PASSWORD } })).status).toBe(201);
      const pool = createHashPool({ size: 1 });
      const user = (await t.gatehouse.stores.users.findUserByEmail('cost@example.com'))!;
      await t.gatehouse.stores.users.setPassword(user.id, await createBcryptHasher({ rounds: 4, pool }).hash(STRONG_PASSWORD));
      await pool.close();
      const before = (await t.gatehouse.stores.users.findUserByEmail('cost@example.com'))!.passwordHash!;
      expect(before).toMatch(/^\$2b\$04\$/);

      expect((await t.request('POST', '/api/auth/login', { json: { email: 'cost@example.com', password: STRONG_PASSWORD } })).status).toBe(200);
      await t.gatehouse.deliverQueuedEmails(); // settles work off the response path
      const after = (await t.gatehouse.stores.users.findUserByEmail('cost@example.com'))!.passwordHash!;
      expect(after).toMatch(/^\$2b\$05\$/);
      expect((await t.request('POST', '/api/auth/login', { json: { email: 'cost@example.com', password: STRONG_PASSWORD } })).status).toBe(200);
      expect((await t.gatehouse.stores.users.findUserByEmail('cost@example.com'))!.passwordHash).toBe(after);
    } finally {
      await t.close();
    }
  });
});

describeEachDialect('account self-service: what ends a pending email change, and ids that never reach the database', (dialect) => {
  let t: TestGatehouse;
  let cookie: string;
  beforeEach(async () => {
    t = await createTestGatehouse(dialect, { env: { NODE_ENV: 'development', RATE_LIMIT_LOGIN: '1000/15m', RATE_LIMIT_EMAIL_CHANGE: '100/1h' } });
    cookie = cookieFrom(await t.request('POST', '/api/auth/register', { json: { email: 'eve@example.com', password: STRONG_PASSWORD } }), 'gatehouse_session')!;
  });
  afterEach(async () => {
    await t.close();
  });
  const requestChange = async (newEmail: string): Promise<string> =>
    (await (await t.request('POST', '/api/auth/email/change', { cookie, json: { newEmail, currentPassword: STRONG_PASSWORD } })).json()).token;
  // From the browser signed in to the account, which stays signed in (every other session ends).
  const confirm = (token: string) => t.request('POST', '/api/auth/email/change/confirm', { cookie, json: { token } });

  test('a password reset, a password change and "sign out everywhere else" each end a pending email change (it may be an intruder’s)', async () => {
    const afterReset = await requestChange('intruder1@example.com');
    const { token: resetToken } = await (await t.request('POST', '/api/auth/password-reset/request', { json: { email: 'eve@example.com' } })).json();
    expect((await t.request('POST', '/api/auth/password-reset/confirm', { json: { token: resetToken, password: 'Brand-New-Pass-7' } })).status).toBe(200);
    expect((await confirm(afterReset)).status).toBe(400);

    cookie = cookieFrom(await t.request('POST', '/api/auth/login', { json: { email: 'eve@example.com', password: 'Brand-New-Pass-7' } }), 'gatehouse_session')!;
    const afterChange = (
      await (
        await t.request('POST', '/api/auth/email/change', { cookie, json: { newEmail: 'intruder2@example.com', currentPassword: 'Brand-New-Pass-7' } })
      ).json()
    ).token;
    expect(
      (await t.request('POST', '/api/auth/password/change', { cookie, json: { currentPassword: 'Brand-New-Pass-7', newPassword: STRONG_PASSWORD } })).status,
    ).toBe(200);
    expect((await confirm(afterChange)).status).toBe(400);

    const afterRevoke = await requestChange('intruder3@example.com');
    expect((await t.request('POST', '/api/auth/sessions/revoke-others', { cookie })).status).toBe(200);
    expect((await confirm(afterRevoke)).status).toBe(400);
    expect((await (await t.request('GET', '/api/auth/session', { cookie })).json()).user.email).toBe('eve@example.com');
  });

  test('a session id or provider not of the form we issue is a 404 like any other (a NUL byte never reaches PostgreSQL)', async () => {
    for (const path of [
      '/api/auth/sessions/%00',
      '/api/auth/sessions/abc%00def',
      '/api/auth/accounts/%00',
      '/api/auth/accounts/GitHub',
      `/api/auth/accounts/${'a'.repeat(40)}`,
    ]) {
      const response = await t.request('DELETE', path, { cookie });
      expect([path, response.status, (await response.json()).error]).toEqual([path, 404, 'not_found']);
    }
  });

  test('deleting the account removes every address it had from its audit rows, not only the last', async () => {
    const token = await requestChange('eve.new@example.com');
    expect((await confirm(token)).status).toBe(200);
    const user = (await (await t.request('GET', '/api/auth/session', { cookie })).json()).user as { id: string };
    expect((await t.request('POST', '/api/auth/account/delete', { cookie, json: { currentPassword: STRONG_PASSWORD } })).status).toBe(200);
    const own = (await t.gatehouse.stores.audit.listRecentEvents(100)).filter((event) => event.userId === user.id);
    expect(own.map((event) => event.type)).toEqual(expect.arrayContaining(['email_change_requested', 'email_changed', 'account_deleted']));
    expect(JSON.stringify(own)).not.toMatch(/eve@example\.com|eve\.new@example\.com/);
  });
});
