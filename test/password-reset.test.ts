import { afterEach, beforeEach, expect, test } from 'vitest';
import { STRONG_PASSWORD, cookieFrom, createTestGatehouse, describeEachDialect, type TestGatehouse } from './support/harness.js';

const COOKIE = 'gatehouse_session';
const HOUR_MS = 60 * 60 * 1000;
const NEW_PASSWORD = 'Brand-New-Pass-7';

describeEachDialect('password reset (development mode)', (dialect) => {
  let t: TestGatehouse;
  let sessionCookie: string;
  beforeEach(async () => {
    t = await createTestGatehouse(dialect, { env: { NODE_ENV: 'development' } });
    const response = await t.request('POST', '/api/auth/register', { json: { email: 'rita@example.com', password: STRONG_PASSWORD } });
    sessionCookie = cookieFrom(response, COOKIE)!;
  });
  afterEach(async () => {
    await t.close();
  });

  const requestReset = (email: string) => t.request('POST', '/api/auth/password-reset/request', { json: { email } });
  const confirm = (token: unknown, password: unknown = NEW_PASSWORD) => t.request('POST', '/api/auth/password-reset/confirm', { json: { token, password } });
  const login = (password: string) => t.request('POST', '/api/auth/login', { json: { email: 'rita@example.com', password } });
  async function tokenFor(email = 'rita@example.com'): Promise<string> {
    const body = await (await requestReset(email)).json();
    return body.token;
  }

  test('POST /password-reset/request: 200 { message } with the dev token and {BASE_URL}/reset-password?token=…', async () => {
    const response = await requestReset('Rita@Example.com');
    expect(response.status).toBe(200);
    const body = await response.json();
    expect(body.token).toMatch(/^[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{43}$/);
    expect(body.resetUrl).toBe(`http://localhost:3000/reset-password?token=${body.token}`);
    expect(typeof body.message).toBe('string');
  });

  test('an unknown email gets the same status and message, and no token', async () => {
    const known = await (await requestReset('rita@example.com')).json();
    const response = await requestReset('nobody@example.com');
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ message: known.message });
  });

  test('confirm sets the new password, revokes every session and audits', async () => {
    const second = cookieFrom(await login(STRONG_PASSWORD), COOKIE)!;
    const response = await confirm(await tokenFor());
    expect(response.status).toBe(200);
    expect(typeof (await response.json()).message).toBe('string');
    for (const cookie of [sessionCookie, second]) {
      expect((await t.request('GET', '/api/auth/session', { cookie })).status).toBe(401);
    }
    expect((await login(STRONG_PASSWORD)).status).toBe(401);
    expect((await login(NEW_PASSWORD)).status).toBe(200);
    const events = await t.gatehouse.stores.audit.listRecentEvents(10);
    expect(events.filter((e) => e.type === 'config_updated').map((e) => e.metadata.reason)).toContain('password_reset_requested');
    expect(events.find((e) => e.type === 'password_reset_completed')?.metadata).toEqual({ email: 'rita@example.com', firstPassword: false });
    const serialized = JSON.stringify(await t.gatehouse.stores.audit.listRecentEvents(50));
    expect(serialized).not.toContain(NEW_PASSWORD);
  });

  test('a completed reset marks the email verified: the link proved the mailbox', async () => {
    await confirm(await tokenFor());
    expect((await t.gatehouse.stores.users.findUserByEmail('rita@example.com'))?.emailVerified).toBe(true);
  });

  test('a reset token works once', async () => {
    const token = await tokenFor();
    expect((await confirm(token)).status).toBe(200);
    const again = await confirm(token, 'Another-Pass-8');
    expect(again.status).toBe(400);
    expect((await again.json()).error).toBe('invalid_token');
    expect((await login(NEW_PASSWORD)).status).toBe(200);
  });

  test('a reset token expires after 1 hour (clock moved)', async () => {
    const token = await tokenFor();
    t.clock.advance(HOUR_MS);
    const response = await confirm(token);
    expect(response.status).toBe(400);
    expect((await response.json()).error).toBe('invalid_token');
  });

  test('it still works a moment before 1 hour', async () => {
    const token = await tokenFor();
    t.clock.advance(HOUR_MS - 1000);
    expect((await confirm(token)).status).toBe(200);
  });

  test('a new request invalidates the earlier token', async () => {
    const first = await tokenFor();
    const second = await tokenFor();
    expect((await confirm(first)).status).toBe(400);
    expect((await confirm(second)).status).toBe(200);
  });

  test('a password that breaks the rules answers 400 validation_error with issues, and spends nothing', async () => {
    const token = await tokenFor();
    const response = await confirm(token, 'weak');
    expect(response.status).toBe(400);
    const body = await response.json();
    expect(body.error).toBe('validation_error');
    expect(body.issues.length).toBeGreaterThan(0);
    expect(body.issues[0].path).toBe('password');
    expect((await confirm(token)).status).toBe(200);
  });

  test('unknown, malformed and tampered tokens answer 400 invalid_token', async () => {
    const token = await tokenFor();
    const [id, secret] = token.split('.');
    for (const bad of ['x', `${id}.${'A'.repeat(43)}`, `${'A'.repeat(22)}.${secret}`, `${token}.`, 'x'.repeat(600), `${token}${'A'.repeat(4000)}`]) {
      const response = await confirm(bad);
      expect(response.status, bad).toBe(400);
      expect((await response.json()).error).toBe('invalid_token');
    }
  });

  test('two simultaneous confirms of one token: exactly one succeeds', async () => {
    const token = await tokenFor();
    const statuses = (await Promise.all([confirm(token, 'First-Pass-11'), confirm(token, 'Second-Pass-22')])).map((r) => r.status);
    expect(statuses.sort()).toEqual([200, 400]);
  });

  test('the reset email carries the link and its lifetime; the stored token is a bcrypt hash', async () => {
    const token = await tokenFor();
    await t.gatehouse.deliverQueuedEmails();
    const email = t.sentEmails.find((e) => e.subject.includes('Reset'));
    expect(email?.text).toContain(`/reset-password?token=${token}`);
    expect(email?.text).toMatch(/1 hour/);
    const [id, secret] = token.split('.');
    const record = await t.gatehouse.stores.resetTokens.findResetToken(id!);
    expect(record?.secretHash).toMatch(/^\$2b\$10\$/);
    expect(record?.secretHash).not.toContain(secret!);
  });
});

describeEachDialect('password reset (not development mode)', (dialect) => {
  test('the request never returns the token; the body is identical for known and unknown emails', async () => {
    const t = await createTestGatehouse(dialect);
    try {
      await t.request('POST', '/api/auth/register', { json: { email: 'known@example.com', password: STRONG_PASSWORD } });
      const known = await t.request('POST', '/api/auth/password-reset/request', { json: { email: 'known@example.com' } });
      const unknown = await t.request('POST', '/api/auth/password-reset/request', { json: { email: 'unknown@example.com' } });
      expect(known.status).toBe(200);
      expect(unknown.status).toBe(200);
      const knownText = await known.text();
      expect(knownText).toBe(await unknown.text());
      expect(knownText).not.toMatch(/token/i);
      // The work follows off the response path: the email and the audit rows arrive after.
      await t.gatehouse.deliverQueuedEmails();
      const resetEmails = t.sentEmails.filter((email) => email.subject.includes('Reset'));
      expect(resetEmails.map((email) => email.to)).toEqual(['known@example.com']);
      const requested = (await t.gatehouse.stores.audit.listRecentEvents(20)).filter((e) => e.metadata.reason === 'password_reset_requested');
      expect(requested.map((e) => e.metadata.accountFound).sort()).toEqual([false, true]);
      // The link in it works.
      const token = decodeURIComponent(/token=([^\s]+)/.exec(resetEmails[0]!.text)![1]!);
      expect((await t.request('POST', '/api/auth/password-reset/confirm', { json: { token, password: 'Brand-New-Pass-7' } })).status).toBe(200);
    } finally {
      await t.close();
    }
  });
});
