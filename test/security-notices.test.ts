import { randomUUID } from 'node:crypto';
import { afterEach, expect, test } from 'vitest';
import { STRONG_PASSWORD, createTestGatehouse, describeEachDialect, type TestGatehouse } from './support/harness.js';

const NEW_PASSWORD = 'Brand-New-Pass-7';
const LOCK_MS = 15 * 60 * 1000;

describeEachDialect('security notices by email', (dialect) => {
  let t: TestGatehouse;
  afterEach(async () => {
    await t.close();
  });

  async function start(env: Record<string, string> = {}): Promise<void> {
    t = await createTestGatehouse(dialect, { env: { NODE_ENV: 'development', RATE_LIMIT_LOGIN: '1000/15m', RATE_LIMIT_REGISTER: '100/15m', ...env } });
  }
  const register = (email: string) => t.request('POST', '/api/auth/register', { json: { email, password: STRONG_PASSWORD } });
  const login = (email: string, password: string, ip = '203.0.113.10') => t.request('POST', '/api/auth/login', { json: { email, password }, ip });
  async function sent(): Promise<{ to: string; subject: string; text: string }[]> {
    await t.gatehouse.deliverQueuedEmails();
    return t.sentEmails.splice(0);
  }
  async function resetPassword(email: string, password = NEW_PASSWORD): Promise<void> {
    const { token } = await (await t.request('POST', '/api/auth/password-reset/request', { json: { email } })).json();
    expect((await t.request('POST', '/api/auth/password-reset/confirm', { json: { token, password } })).status).toBe(200);
  }

  test('failures that lock an account email its owner once, off the response path; the notice holds no secret', async () => {
    await start();
    await register('lena@example.com');
    await sent();
    const answers = [];
    for (let i = 0; i < 5; i++) answers.push(await login('lena@example.com', `Wrong-Guess-${i}a`));
    expect(answers.map((a) => a.status)).toEqual([401, 401, 401, 401, 401]);
    expect((await login('lena@example.com', 'Wrong-Guess-9a')).status).toBe(429);
    const emails = await sent();
    expect(emails).toHaveLength(1);
    expect(emails[0]).toMatchObject({ to: 'lena@example.com', subject: 'Sign-in to your Gatehouse account was paused' });
    expect(emails[0]!.text).toContain('After 5 failed sign-in attempts');
    expect(emails[0]!.text).toContain('paused for 15 minutes');
    expect(emails[0]!.text).not.toMatch(/Wrong-Guess|token=/);
  });

  test('an unknown email locks like a known one but nobody is emailed', async () => {
    await start();
    for (let i = 0; i < 6; i++) await login('ghost@example.com', `Wrong-Guess-${i}a`);
    expect(await sent()).toEqual([]);
  });

  test("an IP's lock, reached by guessing at many accounts, emails none of them", async () => {
    await start();
    const emails = ['a1@example.com', 'a2@example.com', 'a3@example.com', 'a4@example.com', 'a5@example.com'];
    for (const email of emails) await register(email);
    await sent();
    for (const email of emails) await login(email, 'Wrong-Guess-1a', '198.51.100.7');
    expect((await login('a1@example.com', 'Wrong-Guess-2a', '198.51.100.7')).status).toBe(429);
    expect(await sent()).toEqual([]);
  });

  test('a completed reset emails a "password changed" notice; a provider-only account is told a password was set', async () => {
    await start();
    await register('rita@example.com');
    await sent();
    await resetPassword('rita@example.com');
    const [resetEmail, notice] = await sent();
    expect(resetEmail!.subject).toBe('Reset your Gatehouse password');
    expect(notice).toMatchObject({ to: 'rita@example.com', subject: 'Your Gatehouse password was changed' });
    expect(notice!.text).toContain('password reset link');
    expect(notice!.text).toContain('Every other session of your account was signed out.');

    const id = randomUUID();
    await t.gatehouse.stores.users.createUser({ id, email: 'prov@example.com', passwordHash: null, emailVerified: true, createdAt: t.clock.now() });
    await resetPassword('prov@example.com');
    const [, setNotice] = await sent();
    expect(setNotice).toMatchObject({ to: 'prov@example.com', subject: 'A password was set on your Gatehouse account' });
    expect(setNotice!.text).toContain('which until now had none');
    expect(setNotice!.text).not.toContain(NEW_PASSWORD);
  });

  test('RATE_LIMIT_SECURITY_NOTICE caps the notices per user: past it they are dropped, and the day after they flow again', async () => {
    await start({ RATE_LIMIT_SECURITY_NOTICE: '2/24h' });
    await register('lena@example.com');
    await sent();
    const lockOnce = async () => {
      for (let i = 0; i < 5; i++) await login('lena@example.com', `Wrong-Guess-${i}a`);
      t.clock.advance(LOCK_MS + 1000);
    };
    await lockOnce();
    await lockOnce();
    await lockOnce();
    expect((await sent()).map((email) => email.subject)).toEqual([
      'Sign-in to your Gatehouse account was paused',
      'Sign-in to your Gatehouse account was paused',
    ]);
    // The lock itself is not capped: only the emails are.
    for (let i = 0; i < 5; i++) await login('lena@example.com', `Wrong-Guess-${i}a`);
    expect((await login('lena@example.com', STRONG_PASSWORD)).status).toBe(429);
    t.clock.advance(24 * 3600 * 1000);
    await lockOnce();
    expect(await sent()).toHaveLength(1);
  });
});
