/**
 * Rate limits of the verification and reset endpoints (SPEC §8 says they exist; the numbers are
 * ours, README): per IP everywhere, per email for reset requests, per user for resends; counted
 * after body validation; a completed reset lifts the email's login lock.
 */
import { afterEach, expect, test } from 'vitest';
import { STRONG_PASSWORD, cookieFrom, createTestGatehouse, describeEachDialect, type TestGatehouse } from './support/harness.js';

describeEachDialect('rate limits of the verification and reset endpoints', (dialect) => {
  let t: TestGatehouse;
  afterEach(async () => {
    await t.close();
  });
  const start = async (env: Record<string, string> = {}) => {
    t = await createTestGatehouse(dialect, { env: { NODE_ENV: 'development', RATE_LIMIT_REGISTER: '100/15m', ...env } });
  };
  const expectRateLimited = async (response: Response) => {
    expect(response.status).toBe(429);
    expect((await response.json()).error).toBe('rate_limited');
    expect(Number(response.headers.get('retry-after'))).toBeGreaterThan(0);
  };

  test('verify-email: the default allows 10 per 15 minutes per IP, the 11th is refused; a 400 uses nothing', async () => {
    await start();
    for (let i = 0; i < 5; i++) expect((await t.request('POST', '/api/auth/verify-email', { json: {} })).status).toBe(400);
    for (let i = 1; i <= 10; i++) {
      expect((await t.request('POST', '/api/auth/verify-email', { json: { token: 'x' } })).status, `request ${i}`).toBe(400);
    }
    await expectRateLimited(await t.request('POST', '/api/auth/verify-email', { json: { token: 'x' } }));
    expect((await t.request('POST', '/api/auth/verify-email', { json: { token: 'x' }, ip: '198.51.100.77' })).status).toBe(400);
    t.clock.advance(15 * 60_000);
    expect((await t.request('POST', '/api/auth/verify-email', { json: { token: 'x' } })).status).toBe(400);
  });

  test('resend-verification: 3 per 15 minutes per user, even from different IPs', async () => {
    await start();
    const cookie = cookieFrom(
      await t.request('POST', '/api/auth/register', { json: { email: 'resend@example.com', password: STRONG_PASSWORD } }),
      'gatehouse_session',
    )!;
    for (let i = 1; i <= 3; i++) {
      expect((await t.request('POST', '/api/auth/resend-verification', { json: {}, cookie, ip: `198.51.100.${i}` })).status).toBe(200);
    }
    await expectRateLimited(await t.request('POST', '/api/auth/resend-verification', { json: {}, cookie, ip: '198.51.100.9' }));
  });

  test('resend-verification: at most 10 per user per day, however the 15-minute windows are spaced; the next day it works again', async () => {
    await start();
    const cookie = cookieFrom(
      await t.request('POST', '/api/auth/register', { json: { email: 'daily@example.com', password: STRONG_PASSWORD } }),
      'gatehouse_session',
    )!;
    // Aligned to the day's window (windows are epoch-aligned): 10 resends, three per 15 minutes.
    const dayMs = 24 * 3600_000;
    t.clock.advance(dayMs - (t.clock.now().getTime() % dayMs));
    let sent = 0;
    for (let round = 0; round < 5; round++) {
      for (let i = 0; i < 3 && sent < 10; i++, sent++) {
        const answer = await t.request('POST', '/api/auth/resend-verification', { cookie, ip: `198.51.100.${sent + 1}` });
        expect(answer.status, `resend ${sent + 1}`).toBe(200);
      }
      t.clock.advance(15 * 60_000);
    }
    const refused = await t.request('POST', '/api/auth/resend-verification', { cookie, ip: '198.51.100.90' });
    await expectRateLimited(refused);
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(15 * 60);
    t.clock.advance(dayMs);
    // A day later the session has expired too: sign in again, then resend.
    const again = cookieFrom(
      await t.request('POST', '/api/auth/login', { json: { email: 'daily@example.com', password: STRONG_PASSWORD }, ip: '198.51.100.91' }),
      'gatehouse_session',
    )!;
    expect((await t.request('POST', '/api/auth/resend-verification', { cookie: again, ip: '198.51.100.91' })).status).toBe(200);
  });

  test('password-reset/request: 5 per 15 minutes per email across IPs, and per IP across emails; unknown emails count alike', async () => {
    await start();
    for (let i = 1; i <= 5; i++) {
      expect((await t.request('POST', '/api/auth/password-reset/request', { json: { email: 'nobody@example.com' }, ip: `198.51.100.${i}` })).status).toBe(200);
    }
    await expectRateLimited(await t.request('POST', '/api/auth/password-reset/request', { json: { email: 'nobody@example.com' }, ip: '198.51.100.6' }));
    for (let i = 1; i <= 5; i++) {
      expect((await t.request('POST', '/api/auth/password-reset/request', { json: { email: `n${i}@example.com` }, ip: '203.0.113.50' })).status).toBe(200);
    }
    await expectRateLimited(await t.request('POST', '/api/auth/password-reset/request', { json: { email: 'n6@example.com' }, ip: '203.0.113.50' }));
  });

  test('password-reset/confirm: RATE_LIMIT_PASSWORD_RESET_CONFIRM=2/1m refuses the 3rd within a minute', async () => {
    await start({ RATE_LIMIT_PASSWORD_RESET_CONFIRM: '2/1m' });
    const confirm = () => t.request('POST', '/api/auth/password-reset/confirm', { json: { token: 'x', password: 'New-Password-1' } });
    expect((await confirm()).status).toBe(400);
    expect((await confirm()).status).toBe(400);
    await expectRateLimited(await confirm());
  });

  test('a completed password reset lifts the email lock: the new password works at once', async () => {
    await start();
    await t.request('POST', '/api/auth/register', { json: { email: 'locked@example.com', password: STRONG_PASSWORD } });
    for (let i = 1; i <= 5; i++) {
      await t.request('POST', '/api/auth/login', { json: { email: 'locked@example.com', password: 'Wrong-Password-1' }, ip: `198.51.100.${20 + i}` });
    }
    expect((await t.request('POST', '/api/auth/login', { json: { email: 'locked@example.com', password: STRONG_PASSWORD }, ip: '198.51.100.40' })).status).toBe(
      429,
    );
    const { token } = await (
      await t.request('POST', '/api/auth/password-reset/request', { json: { email: 'locked@example.com' }, ip: '198.51.100.41' })
    ).json();
    expect((await t.request('POST', '/api/auth/password-reset/confirm', { json: { token, password: 'Brand-New-Pass-7' }, ip: '198.51.100.41' })).status).toBe(
      200,
    );
    expect(
      (await t.request('POST', '/api/auth/login', { json: { email: 'locked@example.com', password: 'Brand-New-Pass-7' }, ip: '198.51.100.42' })).status,
    ).toBe(200);
  });
});
