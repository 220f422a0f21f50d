/**
 * Passwordless sign-in by email (DESIGN §9.9), black-box through the HTTP API on SQLite and
 * PostgreSQL: the link and the code, single use across both, expiry by the injected clock,
 * replacement, five wrong codes, the login lock, sign-up on and off, 2FA accounts, and nothing
 * usable at rest.
 */
import { randomBytes } from 'node:crypto';
import { sql } from 'kysely';
import { afterEach, expect, test } from 'vitest';
import { STRONG_PASSWORD, cookieFrom, createTestGatehouse, describeEachDialect, type TestGatehouse } from './support/harness.js';
import { totp } from './support/totp-oracle.js';

const SESSION = 'gatehouse_session';
const CHALLENGE = 'gatehouse_mfa';
const MINUTE_MS = 60_000;

describeEachDialect('sign-in by email (DESIGN §9.9)', (dialect) => {
  let t: TestGatehouse;
  afterEach(async () => {
    await t?.close();
  });

  async function start(env: Record<string, string> = {}, overrides = {}): Promise<TestGatehouse> {
    t = await createTestGatehouse(dialect, { env: { RATE_LIMIT_VERIFY_EMAIL: '1000/15m', RATE_LIMIT_EMAIL_SIGN_IN: '1000/15m', ...env }, overrides });
    return t;
  }
  /** A verified account with a password (verified by hand: the reset and verification flows are tested elsewhere). */
  async function account(email = 'ana@example.com'): Promise<{ id: string; cookie: string }> {
    const response = await t.request('POST', '/api/auth/register', { json: { email, password: STRONG_PASSWORD }, ip: '198.51.100.200' });
    expect(response.status).toBe(201);
    const user = (await t.gatehouse.stores.users.findUserByEmail(email))!;
    await t.gatehouse.stores.users.markEmailVerified(user.id);
    return { id: user.id, cookie: cookieFrom(response, SESSION)! };
  }
  const ask = (email: string, ip = '203.0.113.10', extra: Record<string, unknown> = {}) =>
    t.request('POST', '/api/auth/email-sign-in/request', { json: { email, ...extra }, ip });
  const verify = (json: unknown, ip = '203.0.113.10') => t.request('POST', '/api/auth/email-sign-in/verify', { json, ip });
  /** Asks, lets the off-response work and the sender run, and reads the link's token and the code from the email. */
  async function mailed(email: string, ip?: string): Promise<{ token: string; code: string; subject: string; text: string }> {
    const before = t.sentEmails.length;
    expect((await ask(email, ip)).status).toBe(200);
    await t.gatehouse.deliverQueuedEmails();
    const sent = t.sentEmails.slice(before).filter((e) => e.to === email && e.subject.startsWith('Sign in to'));
    expect(sent).toHaveLength(1);
    const { text, subject } = sent[0]!;
    const link = /http:\/\/localhost:3000\/email-sign-in\?token=(\S+)/.exec(text);
    const code = /code on the sign-in page: (\d{6})\b/.exec(text);
    expect(link).not.toBeNull();
    expect(code).not.toBeNull();
    return { token: decodeURIComponent(link![1]!), code: code![1]!, subject, text };
  }
  const sessionOf = async (response: Response) => {
    const cookie = cookieFrom(response, SESSION);
    expect(cookie).toBeDefined();
    return (await t.request('GET', '/api/auth/session', { cookie })).json();
  };
  const errorOf = async (response: Response) => [response.status, (await response.json()).error];

  test('the link: a session with methods ["email_link"], the email verified, audited; the link and the code are then spent', async () => {
    await start();
    const { id } = await account();
    const { token, code, subject, text } = await mailed('ana@example.com');
    expect(token).toMatch(/^[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{43}$/);
    expect(subject).not.toContain(code);
    expect(text).toMatch(/expire in 15 minutes/);

    const response = await verify({ token });
    expect(response.status).toBe(200);
    expect(await response.clone().json()).toEqual({ ok: true });
    const session = await sessionOf(response);
    expect(session.session.methods).toEqual(['email_link']);
    expect(session.user).toMatchObject({ id, email: 'ana@example.com', emailVerified: true });
    const success = (await t.gatehouse.stores.audit.listRecentEvents(20)).find((e) => e.type === 'login_success');
    expect(success?.metadata).toEqual({ email: 'ana@example.com', method: 'email_link' });

    expect(await errorOf(await verify({ token }))).toEqual([400, 'invalid_token']);
    expect(await errorOf(await verify({ email: 'ana@example.com', code }))).toEqual([401, 'invalid_code']);
  });

  test('the code: a session with methods ["email_code"]; the link is then spent; an unverified address becomes verified', async () => {
    await start();
    await t.request('POST', '/api/auth/register', { json: { email: 'bo@example.com', password: STRONG_PASSWORD } });
    await t.gatehouse.deliverQueuedEmails();
    const { token, code } = await mailed('bo@example.com');
    const response = await verify({ email: 'Bo@Example.com', code: `${code.slice(0, 3)} ${code.slice(3)}` });
    expect(response.status).toBe(200);
    const session = await sessionOf(response);
    expect(session.session.methods).toEqual(['email_code']);
    expect(session.user.emailVerified).toBe(true);
    const success = (await t.gatehouse.stores.audit.listRecentEvents(20)).find((e) => e.type === 'login_success');
    expect(success?.metadata).toEqual({ email: 'bo@example.com', method: 'email_code' });
    expect(await errorOf(await verify({ token }))).toEqual([400, 'invalid_token']);
    expect(await errorOf(await verify({ email: 'bo@example.com', code }))).toEqual([401, 'invalid_code']);
  });

  test('an unverified account with a password (maybe a squatter) loses the password, its sessions and a pending email change when the mailbox signs in', async () => {
    await start();
    const squatter = cookieFrom(await t.request('POST', '/api/auth/register', { json: { email: 'cy@example.com', password: STRONG_PASSWORD } }), SESSION)!;
    const moved = await t.request('POST', '/api/auth/email/change', {
      cookie: squatter,
      json: { newEmail: 'squatter@example.com', currentPassword: STRONG_PASSWORD },
    });
    expect(moved.status).toBe(200);
    const { id } = (await t.gatehouse.stores.users.findUserByEmail('cy@example.com'))!;
    expect(await t.gatehouse.stores.emailChangeTokens.listPendingEmails(id)).toEqual(['squatter@example.com']);
    const { token } = await mailed('cy@example.com');
    expect((await verify({ token })).status).toBe(200);
    expect((await t.request('GET', '/api/auth/session', { cookie: squatter })).status).toBe(401);
    expect((await t.gatehouse.stores.users.findUserByEmail('cy@example.com'))!.passwordHash).toBeNull();
    expect((await t.request('POST', '/api/auth/login', { json: { email: 'cy@example.com', password: STRONG_PASSWORD } })).status).toBe(401);
    expect(await t.gatehouse.stores.emailChangeTokens.listPendingEmails(id)).toEqual([]);
    const secured = (await t.gatehouse.stores.audit.listRecentEvents(20)).find((e) => e.metadata.action === 'unverified_account_secured_for_email_sign_in');
    expect(secured?.metadata).toMatchObject({ email: 'cy@example.com', passwordRemoved: true, sessionsRevoked: 1 });
  });

  test('link and code expire after 15 minutes (the injected clock)', async () => {
    await start();
    await account();
    const first = await mailed('ana@example.com');
    t.clock.advance(15 * MINUTE_MS - 1000);
    const second = await mailed('ana@example.com');
    expect((await verify({ email: 'ana@example.com', code: second.code })).status).toBe(200);
    void first;
    const third = await mailed('ana@example.com');
    t.clock.advance(15 * MINUTE_MS);
    expect(await errorOf(await verify({ token: third.token }))).toEqual([400, 'invalid_token']);
    expect(await errorOf(await verify({ email: 'ana@example.com', code: third.code }))).toEqual([401, 'invalid_code']);
    // The hourly sweep deletes the expired row.
    expect((await t.gatehouse.sweep()).emailSignIns).toBe(1);
  });

  test('just before the 15 minutes the link still works', async () => {
    await start();
    await account();
    const { token } = await mailed('ana@example.com');
    t.clock.advance(15 * MINUTE_MS - 1000);
    expect((await verify({ token })).status).toBe(200);
  });

  test('a newer request replaces the older one: its link and code no longer work', async () => {
    await start();
    await account();
    const older = await mailed('ana@example.com');
    const newer = await mailed('ana@example.com');
    expect(newer.code === older.code && newer.token === older.token).toBe(false);
    expect(await errorOf(await verify({ token: older.token }))).toEqual([400, 'invalid_token']);
    if (older.code !== newer.code) expect(await errorOf(await verify({ email: 'ana@example.com', code: older.code }))).toEqual([401, 'invalid_code']);
    expect((await verify({ token: newer.token })).status).toBe(200);
  });

  test('five wrong codes kill that code (the link still works); each wrong code is a failed login', async () => {
    await start({ LOCKOUT_MAX_FAILURES: '50' });
    await account();
    const { token, code } = await mailed('ana@example.com');
    const wrong = String((Number(code) + 1) % 1_000_000).padStart(6, '0');
    for (let i = 0; i < 5; i += 1) expect(await errorOf(await verify({ email: 'ana@example.com', code: wrong }))).toEqual([401, 'invalid_code']);
    expect(await errorOf(await verify({ email: 'ana@example.com', code }))).toEqual([401, 'invalid_code']);
    const failures = (await t.gatehouse.stores.audit.listRecentEvents(50)).filter((e) => e.type === 'login_failure' && e.metadata.method === 'email_code');
    expect(failures).toHaveLength(6);
    expect((await verify({ token })).status).toBe(200);
  });

  test('wrong codes count toward the login lock, for an unknown address exactly as for a known one (no oracle)', async () => {
    await start({ LOCKOUT_MAX_FAILURES: '3' });
    await account();
    const { code } = await mailed('ana@example.com');
    const wrong = String((Number(code) + 7) % 1_000_000).padStart(6, '0');
    const run = async (email: string, ip: string) => {
      const answers = [];
      for (let i = 0; i < 4; i += 1) {
        const response = await verify({ email, code: wrong }, ip);
        answers.push([response.status, await response.json()]);
      }
      return answers;
    };
    const known = await run('ana@example.com', '198.51.100.1');
    const unknown = await run('nobody@example.com', '198.51.100.2');
    expect(known).toEqual(unknown);
    expect(known.map(([status]) => status)).toEqual([401, 401, 401, 429]);
    expect(known[3]![1].error).toBe('account_locked');
    // Locked: the right code is refused too, from anywhere.
    expect(await errorOf(await verify({ email: 'ana@example.com', code }, '198.51.100.3'))).toEqual([429, 'account_locked']);
    // The owner is told (off the response path).
    await t.gatehouse.deliverQueuedEmails();
    expect(t.sentEmails.some((e) => e.to === 'ana@example.com' && /paused/.test(e.subject))).toBe(true);
  });

  test('known and unknown addresses get the same answer; an unknown one gets no email while sign-up is off', async () => {
    await start();
    await account();
    const known = await ask('ana@example.com');
    const unknown = await ask('nobody@example.com');
    expect([unknown.status, await unknown.json()]).toEqual([known.status, await known.json()]);
    expect(unknown.headers.getSetCookie()).toEqual(known.headers.getSetCookie());
    await t.gatehouse.deliverQueuedEmails();
    expect(t.sentEmails.filter((e) => e.to === 'nobody@example.com')).toHaveLength(0);
    expect(await t.gatehouse.stores.users.findUserByEmail('nobody@example.com')).toBeNull();
    expect(await errorOf(await verify({ email: 'nobody@example.com', code: '123456' }))).toEqual([401, 'invalid_code']);
  });

  test('EMAIL_SIGN_IN_SIGNUP=true: an unknown address is mailed, and its first use creates a verified account without a password', async () => {
    await start({ EMAIL_SIGN_IN_SIGNUP: 'true' });
    const { token } = await mailed('new@example.com');
    expect(await t.gatehouse.stores.users.findUserByEmail('new@example.com')).toBeNull();
    const response = await verify({ token });
    expect(response.status).toBe(200);
    const session = await sessionOf(response);
    expect(session.session.methods).toEqual(['email_link']);
    const user = (await t.gatehouse.stores.users.findUserByEmail('new@example.com'))!;
    expect(user).toMatchObject({ emailVerified: true, passwordHash: null });
    expect((await t.gatehouse.stores.audit.listRecentEvents(20)).find((e) => e.type === 'user_created')?.metadata).toEqual({
      email: 'new@example.com',
      method: 'email',
    });
    // The code path creates one too.
    const second = await mailed('other@example.com');
    expect((await verify({ email: 'other@example.com', code: second.code })).status).toBe(200);
    expect(await t.gatehouse.stores.users.findUserByEmail('other@example.com')).not.toBeNull();
  });

  test('a 2FA account gets the challenge instead of a session, and the authenticator code finishes it', async () => {
    await start({ ENCRYPTION_KEY_BASE64: randomBytes(32).toString('base64'), RATE_LIMIT_MFA_VERIFY: '1000/15m' });
    const { cookie } = await account();
    const { secret } = await (await t.request('POST', '/api/auth/2fa/totp/setup', { cookie, json: { currentPassword: STRONG_PASSWORD } })).json();
    const enabled = await t.request('POST', '/api/auth/2fa/totp/enable', { cookie, json: { code: totp(secret, t.clock.now().getTime()) } });
    expect(enabled.status).toBe(200);

    for (const kind of ['link', 'code'] as const) {
      t.clock.advance(60_000);
      const { token, code } = await mailed('ana@example.com');
      const response = await verify(kind === 'link' ? { token } : { email: 'ana@example.com', code });
      expect(await response.json()).toEqual({ ok: true, mfaRequired: true, methods: ['totp', 'recovery_code'] });
      expect(cookieFrom(response, SESSION)).toBeUndefined();
      const challenge = cookieFrom(response, CHALLENGE)!;
      expect(challenge).toBeDefined();
      const finished = await t.request('POST', '/api/auth/2fa/verify', { cookie: challenge, json: { code: totp(secret, t.clock.now().getTime()) } });
      expect(finished.status).toBe(200);
      expect((await sessionOf(finished)).session.methods).toEqual([kind === 'link' ? 'email_link' : 'email_code', 'totp']);
    }
  });

  test('rate limited per address (RATE_LIMIT_EMAIL_SIGN_IN), for unknown addresses too', async () => {
    await start({ RATE_LIMIT_EMAIL_SIGN_IN: '2/15m' });
    await account();
    for (const email of ['ana@example.com', 'nobody@example.com']) {
      expect((await ask(email, '198.51.100.10')).status).toBe(200);
      expect((await ask(email, '198.51.100.11')).status).toBe(200);
      expect(await errorOf(await ask(email, '198.51.100.12'))).toEqual([429, 'rate_limited']);
    }
    // And per IP.
    expect((await ask('x1@example.com', '198.51.100.20')).status).toBe(200);
    expect((await ask('x2@example.com', '198.51.100.20')).status).toBe(200);
    expect(await errorOf(await ask('x3@example.com', '198.51.100.20'))).toEqual([429, 'rate_limited']);
  });

  test('refusals: a malformed token, a body with neither form, an unknown token', async () => {
    await start();
    expect(await errorOf(await verify({ token: 'not-a-token' }))).toEqual([400, 'invalid_token']);
    expect(await errorOf(await verify({ token: `${'A'.repeat(22)}.${'B'.repeat(43)}` }))).toEqual([400, 'invalid_token']);
    expect(await errorOf(await verify({}))).toEqual([400, 'validation_error']);
    expect(await errorOf(await verify({ email: 'ana@example.com' }))).toEqual([400, 'validation_error']);
    expect(await errorOf(await verify({ email: 'ana@example.com', code: 'x'.repeat(100) }))).toEqual([400, 'validation_error']);
  });

  test('return_to: a same-origin path comes back with the session; another origin is dropped', async () => {
    await start({ NODE_ENV: 'development' });
    await account();
    const own = await (await ask('ana@example.com', undefined, { return_to: '/after' })).json();
    expect(await (await verify({ token: own.token })).json()).toEqual({ ok: true, returnTo: '/after' });
    const evil = await (await ask('ana@example.com', undefined, { return_to: 'https://evil.example/' })).json();
    expect(await (await verify({ token: evil.token })).json()).toEqual({ ok: true });
  });

  test('development mode answers the token, the link and the code for a known address only', async () => {
    await start({ NODE_ENV: 'development' });
    await account();
    const body = await (await ask('ana@example.com')).json();
    expect(body.url).toBe(`http://localhost:3000/email-sign-in?token=${encodeURIComponent(body.token)}`);
    expect(body.code).toMatch(/^\d{6}$/);
    expect(Object.keys(await (await ask('nobody@example.com')).json())).toEqual(['message']);
  });

  test('nothing usable at rest: no secret or code in any table; a spent link is purged from the outbox', async () => {
    // No sender: the email stays queued, as in production without SMTP_URL.
    await start({ NODE_ENV: 'development' }, { mailer: null });
    await account();
    const { token, code } = await (await ask('ana@example.com')).json();
    const secret = token.split('.')[1];
    const dump = async (): Promise<string> => {
      const names =
        dialect === 'sqlite'
          ? (await sql<{ name: string }>`select name from sqlite_master where type = 'table'`.execute(t.database.kysely)).rows
          : (
              await sql<{ name: string }>`select table_name as name from information_schema.tables where table_schema = current_schema()`.execute(
                t.database.kysely,
              )
            ).rows;
      const rows = await Promise.all(names.map(({ name }) => sql`select * from ${sql.table(name)}`.execute(t.database.kysely)));
      return JSON.stringify(rows.map((r) => r.rows));
    };
    const signInRow = JSON.stringify(await sql`select * from email_sign_in_tokens`.execute(t.database.kysely));
    expect(signInRow).not.toContain(secret);
    expect(signInRow).not.toMatch(new RegExp(`(?<!\\d)${code}(?!\\d)`));
    const queued = await t.gatehouse.stores.outbox.listEmails(10);
    expect(queued.find((e) => e.template === 'email_sign_in')?.text).toContain(code);

    expect((await verify({ email: 'ana@example.com', code })).status).toBe(200);
    const purged = (await t.gatehouse.stores.outbox.listEmails(10)).find((e) => e.template === 'email_sign_in')!;
    expect(purged).toMatchObject({ status: 'expired', text: null, html: null });
    const everything = await dump();
    expect(everything).not.toContain(secret);
    expect(everything).not.toMatch(new RegExp(`(?<!\\d)${code}(?!\\d)`));
  });

  test("a replaced request's still-queued email is purged too", async () => {
    await start({ NODE_ENV: 'development' }, { mailer: null });
    await account();
    await ask('ana@example.com');
    await ask('ana@example.com');
    const emails = (await t.gatehouse.stores.outbox.listEmails(10)).filter((e) => e.template === 'email_sign_in');
    expect(emails.map((e) => e.status).sort()).toEqual(['expired', 'queued']);
  });

  test('two verifications of one sign-in at once: exactly one session', async () => {
    await start();
    await account();
    const { token, code } = await mailed('ana@example.com');
    const answers = await Promise.all([verify({ token }), verify({ email: 'ana@example.com', code }), verify({ token })]);
    expect(answers.filter((r) => r.status === 200)).toHaveLength(1);
  });
});
