import { afterEach, beforeEach, expect, test } from 'vitest';
import { STRONG_PASSWORD, cookieFrom, createTestGatehouse, describeEachDialect, type TestGatehouse } from './support/harness.js';

const COOKIE = 'gatehouse_session';
const DAY_MS = 24 * 60 * 60 * 1000;

describeEachDialect('email verification (development mode)', (dialect) => {
  let t: TestGatehouse;
  beforeEach(async () => {
    t = await createTestGatehouse(dialect, { env: { NODE_ENV: 'development' } });
  });
  afterEach(async () => {
    await t.close();
  });

  async function register(email = 'vera@example.com') {
    const response = await t.request('POST', '/api/auth/register', { json: { email, password: STRONG_PASSWORD } });
    expect(response.status).toBe(201);
    const body = await response.json();
    return { body, cookie: cookieFrom(response, COOKIE)! };
  }
  // From a client that is not signed in, unless a session cookie is given (a signed-in browser).
  const verify = (token: unknown, cookie?: string) => t.request('POST', '/api/auth/verify-email', { json: { token }, cookie });
  const whoami = async (cookie: string) => (await (await t.request('GET', '/api/auth/session', { cookie })).json()).user;

  test('register returns the token and {BASE_URL}/verify-email?token=… in development mode', async () => {
    const { body } = await register();
    expect(body.verificationToken).toMatch(/^[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{43}$/);
    expect(body.verificationUrl).toBe(`http://localhost:3000/verify-email?token=${body.verificationToken}`);
  });

  test('POST /verify-email answers 200 { message, verified: true } and marks the email verified', async () => {
    const { body, cookie } = await register();
    const response = await verify(body.verificationToken, cookie);
    expect(response.status).toBe(200);
    const answer = await response.json();
    expect(answer.verified).toBe(true);
    expect(typeof answer.message).toBe('string');
    expect((await whoami(cookie)).emailVerified).toBe(true);
    const [event] = await t.gatehouse.stores.audit.listRecentEvents(1);
    expect(event).toMatchObject({ type: 'config_updated', metadata: { reason: 'email_verified', email: 'vera@example.com' } });
  });

  test('a verification token works once', async () => {
    const { body } = await register();
    expect((await verify(body.verificationToken)).status).toBe(200);
    const again = await verify(body.verificationToken);
    expect(again.status).toBe(400);
    expect(await again.json()).toMatchObject({ error: 'invalid_token' });
  });

  test('a verification token expires after 24 hours (clock moved)', async () => {
    const { body } = await register();
    t.clock.advance(DAY_MS);
    const response = await verify(body.verificationToken);
    expect(response.status).toBe(400);
    expect((await response.json()).error).toBe('invalid_token');
    expect((await t.gatehouse.stores.users.findUserByEmail('vera@example.com'))?.emailVerified).toBe(false);
  });

  test('it still works a moment before 24 hours', async () => {
    const { body } = await register();
    t.clock.advance(DAY_MS - 1000);
    expect((await verify(body.verificationToken)).status).toBe(200);
  });

  test('unknown, malformed and tampered tokens answer 400 invalid_token', async () => {
    const { body } = await register();
    const [id, secret] = (body.verificationToken as string).split('.');
    const flipped = `${id}.${secret!.slice(0, -1)}${secret!.endsWith('A') ? 'B' : 'A'}`;
    // A token longer than any we issue is just another wrong token, not a validation error.
    for (const token of [
      'nope',
      `${'A'.repeat(22)}.${'B'.repeat(43)}`,
      flipped,
      `${body.verificationToken}x`,
      '.',
      'x'.repeat(600),
      `${body.verificationToken}${'A'.repeat(4000)}`,
    ]) {
      const response = await verify(token);
      expect(response.status, token).toBe(400);
      expect((await response.json()).error).toBe('invalid_token');
    }
    expect((await verify(body.verificationToken)).status).toBe(200);
  });

  test('a missing or non-string token is a validation error', async () => {
    expect((await (await t.request('POST', '/api/auth/verify-email', { json: {} })).json()).error).toBe('validation_error');
    expect((await verify(12)).status).toBe(400);
  });

  test('two simultaneous verifications of one token: exactly one succeeds', async () => {
    const { body } = await register();
    const statuses = (await Promise.all([verify(body.verificationToken), verify(body.verificationToken)])).map((r) => r.status);
    expect(statuses.sort()).toEqual([200, 400]);
  });

  test('POST /resend-verification: a new token and link; the earlier token stops working', async () => {
    const { body, cookie } = await register();
    const response = await t.request('POST', '/api/auth/resend-verification', { json: {}, cookie });
    expect(response.status).toBe(200);
    const resent = await response.json();
    expect(resent.verificationToken).not.toBe(body.verificationToken);
    expect(resent.verificationUrl).toContain(encodeURIComponent(resent.verificationToken));
    expect((await verify(body.verificationToken)).status).toBe(400);
    expect((await verify(resent.verificationToken)).status).toBe(200);
  });

  test('simultaneous resends leave exactly one working verification token', async () => {
    await t.close();
    t = await createTestGatehouse(dialect, { env: { NODE_ENV: 'development', RATE_LIMIT_RESEND_VERIFICATION: '100/15m' } });
    const { cookie } = await register();
    const answers = await Promise.all(Array.from({ length: 10 }, () => t.request('POST', '/api/auth/resend-verification', { json: {}, cookie })));
    const tokens: string[] = [];
    for (const answer of answers) tokens.push((await answer.json()).verificationToken);
    const statuses = [];
    for (const token of tokens) statuses.push((await verify(token)).status);
    expect(statuses.filter((status) => status === 200)).toHaveLength(1);
  });

  test('POST /resend-verification answers 401 without a session', async () => {
    const response = await t.request('POST', '/api/auth/resend-verification', { json: {} });
    expect(response.status).toBe(401);
    expect((await response.json()).error).toBe('not_authenticated');
  });

  test('POST /resend-verification for a verified user: a clear 200 and no new token', async () => {
    const { body, cookie } = await register();
    await verify(body.verificationToken, cookie);
    const response = await t.request('POST', '/api/auth/resend-verification', { json: {}, cookie });
    expect(response.status).toBe(200);
    const answer = await response.json();
    expect(answer.alreadyVerified).toBe(true);
    expect(answer.verificationToken).toBeUndefined();
    await t.gatehouse.deliverQueuedEmails();
    expect(t.sentEmails).toHaveLength(1);
  });

  test('POST /resend-verification answers 404 not_found for a user without an email', async () => {
    const { randomUUID } = await import('node:crypto');
    const { issueSession } = await import('../src/session/flow.js');
    const { createSessionTokenCodec } = await import('../src/session/token.js');
    const { TEST_JWT_SECRET } = await import('./support/harness.js');
    const id = randomUUID();
    await t.gatehouse.stores.users.createUser({ id, email: null, passwordHash: null, emailVerified: false, createdAt: t.clock.now() });
    const session = await issueSession(
      { sessions: t.gatehouse.stores.sessions, tokens: createSessionTokenCodec(TEST_JWT_SECRET), sessionExpiresInSeconds: 3600 },
      id,
      { now: t.clock.now(), ip: null, userAgent: null },
      ['github'],
    );
    const response = await t.request('POST', '/api/auth/resend-verification', { json: {}, cookie: `${COOKIE}=${session.token}` });
    expect(response.status).toBe(404);
    expect((await response.json()).error).toBe('not_found');
  });

  test('the verification email is queued with the user and delivered with the link', async () => {
    const { body } = await register();
    // Delivery starts off the response path; draining waits for it.
    await t.gatehouse.deliverQueuedEmails();
    expect(t.sentEmails).toHaveLength(1);
    expect(t.sentEmails[0]!.to).toBe('vera@example.com');
    expect(t.sentEmails[0]!.text).toContain(body.verificationUrl);
    expect(t.sentEmails[0]!.text).toMatch(/24 hours/);
    const [row] = await t.gatehouse.stores.outbox.listEmails(1);
    expect(row).toMatchObject({ status: 'sent', text: null, template: 'email_verification' });
  });
});

describeEachDialect('email verification (not development mode)', (dialect) => {
  test('register and resend never return the token outside development mode', async () => {
    const production = { NODE_ENV: 'production', BASE_URL: 'https://auth.example.com', BCRYPT_ROUNDS: '10', METRICS_PUBLIC: 'true' };
    for (const env of [{}, production] as Record<string, string>[]) {
      const t = await createTestGatehouse(dialect, { env });
      try {
        const response = await t.request('POST', '/api/auth/register', { json: { email: 'prod@example.com', password: STRONG_PASSWORD } });
        const body = await response.json();
        expect(body).toEqual({ ok: true, message: expect.any(String) });
        const cookie = response.headers.getSetCookie()[0]!.split(';')[0]!;
        const resent = await (await t.request('POST', '/api/auth/resend-verification', { json: {}, cookie })).json();
        expect(Object.keys(resent)).toEqual(['message']);
        // The link reached the sender only.
        await t.gatehouse.deliverQueuedEmails();
        expect(t.sentEmails).toHaveLength(2);
      } finally {
        await t.close();
      }
    }
  });
});
