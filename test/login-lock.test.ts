/** The login lock (SPEC §3, §8): failures counted by email and by IP, the 5th locks for 15 minutes. */
import { afterEach, expect, test } from 'vitest';
import { serviceUnavailable } from '../src/errors.js';
import { createHashPool } from '../src/credentials/hash-pool.js';
import { createBcryptHasher } from '../src/credentials/hasher.js';
import { createCountingHasher } from './support/counting-hasher.js';
import { STRONG_PASSWORD, createTestGatehouse, describeEachDialect, type TestGatehouse } from './support/harness.js';

const WRONG = 'Wrong-Password-1';

describeEachDialect('login lock', (dialect) => {
  let t: TestGatehouse | undefined;
  afterEach(async () => {
    await t?.close();
    t = undefined;
  });
  const start = async (env: Record<string, string> = {}): Promise<TestGatehouse> => {
    t = await createTestGatehouse(dialect, { env });
    return t;
  };
  const register = (g: TestGatehouse, email: string) =>
    g.request('POST', '/api/auth/register', { json: { email, password: STRONG_PASSWORD }, ip: '192.0.2.200' });
  const login = (g: TestGatehouse, email: string, password: string, ip = '203.0.113.10') =>
    g.request('POST', '/api/auth/login', { json: { email, password }, ip });

  test('the 5th failure still answers 401 and locks: then even the right password gets 429 account_locked with Retry-After', async () => {
    const g = await start();
    await register(g, 'lock@example.com');
    for (let i = 1; i <= 5; i++) {
      const response = await login(g, 'lock@example.com', WRONG);
      expect(response.status, `failure ${i}`).toBe(401);
      expect((await response.json()).error).toBe('invalid_credentials');
    }
    const locked = await login(g, 'lock@example.com', STRONG_PASSWORD);
    expect(locked.status).toBe(429);
    expect(await locked.json()).toEqual({ error: 'account_locked', message: expect.any(String) });
    expect(locked.headers.get('retry-after')).toBe('900');
    expect(locked.headers.getSetCookie()).toEqual([]);
  });

  test('4 failures do not lock', async () => {
    const g = await start();
    await register(g, 'four@example.com');
    for (let i = 1; i <= 4; i++) await login(g, 'four@example.com', WRONG);
    expect((await login(g, 'four@example.com', STRONG_PASSWORD)).status).toBe(200);
  });

  test('the lock ends after LOCKOUT_DURATION (clock moved, not slept), with a fresh count', async () => {
    const g = await start();
    await register(g, 'ends@example.com');
    for (let i = 1; i <= 5; i++) await login(g, 'ends@example.com', WRONG);
    g.clock.advance(14 * 60_000);
    const still = await login(g, 'ends@example.com', STRONG_PASSWORD);
    expect(still.status).toBe(429);
    expect(still.headers.get('retry-after')).toBe('60');
    g.clock.advance(60_000);
    // One more failure after the lock is the first of a new count, not the 6th.
    expect((await login(g, 'ends@example.com', WRONG)).status).toBe(401);
    expect((await login(g, 'ends@example.com', STRONG_PASSWORD)).status).toBe(200);
  });

  test('the email is locked from every IP, and the IP is locked for every email', async () => {
    const g = await start();
    await register(g, 'victim@example.com');
    await register(g, 'bystander@example.com');
    for (let i = 1; i <= 5; i++) await login(g, 'victim@example.com', WRONG, '198.51.100.66');
    const otherIp = await login(g, 'victim@example.com', STRONG_PASSWORD, '198.51.100.67');
    expect(otherIp.status).toBe(429);
    expect((await otherIp.json()).error).toBe('account_locked');
    const otherEmail = await login(g, 'bystander@example.com', STRONG_PASSWORD, '198.51.100.66');
    expect(otherEmail.status).toBe(429);
    expect((await login(g, 'bystander@example.com', STRONG_PASSWORD, '198.51.100.68')).status).toBe(200);
  });

  test('failures by IP: one IP guessing 5 different emails is locked', async () => {
    const g = await start();
    await register(g, 'spray@example.com');
    for (let i = 1; i <= 5; i++) expect((await login(g, `spray${i}@example.com`, WRONG, '198.51.100.70')).status).toBe(401);
    expect((await login(g, 'spray@example.com', STRONG_PASSWORD, '198.51.100.70')).status).toBe(429);
    expect((await login(g, 'spray@example.com', STRONG_PASSWORD, '198.51.100.71')).status).toBe(200);
  });

  test('failures by email: 5 IPs guessing one email lock it', async () => {
    const g = await start();
    await register(g, 'botnet@example.com');
    for (let i = 1; i <= 5; i++) expect((await login(g, 'botnet@example.com', WRONG, `198.51.100.${80 + i}`)).status).toBe(401);
    expect((await login(g, 'botnet@example.com', STRONG_PASSWORD, '198.51.100.99')).status).toBe(429);
  });

  test('unknown emails are counted and locked like known ones', async () => {
    const g = await start();
    for (let i = 1; i <= 5; i++) expect((await login(g, 'ghost@example.com', WRONG, `198.51.100.${10 + i}`)).status).toBe(401);
    const locked = await login(g, 'ghost@example.com', WRONG, '198.51.100.30');
    expect(locked.status).toBe(429);
    expect((await locked.json()).error).toBe('account_locked');
  });

  test("a successful login clears the email's count: 4 failures, a success, 4 failures (from another address) do not lock", async () => {
    const g = await start();
    await register(g, 'clear@example.com');
    for (let i = 1; i <= 4; i++) await login(g, 'clear@example.com', WRONG);
    expect((await login(g, 'clear@example.com', STRONG_PASSWORD)).status).toBe(200);
    for (let i = 1; i <= 4; i++) expect((await login(g, 'clear@example.com', WRONG, '198.51.100.77')).status).toBe(401);
    expect((await login(g, 'clear@example.com', STRONG_PASSWORD, '198.51.100.77')).status).toBe(200);
  });

  test("a successful login does not clear its IP's count: signing in to one's own account between guesses does not reset a spraying address", async () => {
    const g = await start();
    await register(g, 'sprayer@example.com');
    for (let i = 1; i <= 4; i++) expect((await login(g, `victim${i}@example.com`, WRONG)).status).toBe(401);
    expect((await login(g, 'sprayer@example.com', STRONG_PASSWORD)).status).toBe(200);
    expect((await login(g, 'victim5@example.com', WRONG)).status).toBe(401);
    const locked = await login(g, 'victim6@example.com', WRONG);
    expect(locked.status).toBe(429);
    expect((await locked.json()).error).toBe('account_locked');
  });

  test('the lock cannot be raced: of 20 concurrent wrong logins for one email, at most LOCKOUT_MAX_FAILURES reach bcrypt, the others get 429', async () => {
    const counted = createCountingHasher({ poolSize: 2 });
    t = await createTestGatehouse(dialect, { overrides: { hasher: counted.hasher } });
    const g = t;
    await register(g, 'race@example.com');
    const answers = await Promise.all(Array.from({ length: 20 }, (_, i) => login(g, 'race@example.com', WRONG, `198.51.100.${100 + i}`)));
    const statuses = answers.map((answer) => answer.status);
    const verifications = counted.verifications();
    expect(verifications).toBeLessThanOrEqual(5);
    expect(statuses.filter((status) => status === 401).length).toBe(verifications);
    expect(statuses.filter((status) => status === 429).length).toBe(20 - verifications);
    // And from one address: the IP's count is raced the same way.
    const fromOneIp = await Promise.all(Array.from({ length: 20 }, (_, i) => login(g, `spray${i}@example.com`, WRONG, '198.51.100.250')));
    const sprayed = counted.verifications() - verifications;
    expect(sprayed).toBeLessThanOrEqual(5);
    expect(fromOneIp.filter((answer) => answer.status === 429).length).toBe(20 - sprayed);
    // The right password is then refused too: the account is locked, not just busy.
    expect((await login(g, 'race@example.com', STRONG_PASSWORD, '198.51.100.99')).status).toBe(429);
    await counted.close();
  });

  test('people behind one address logging in at once with the right passwords are never locked: a crowd beyond the limit is told to retry in a second, and nothing lingers', async () => {
    const g = await start({ RATE_LIMIT_REGISTER: '100/15m', RATE_LIMIT_LOGIN: '100/15m' });
    const emails = Array.from({ length: 10 }, (_, i) => `office${i}@example.com`);
    for (const email of emails) await register(g, email);
    const answers = await Promise.all(emails.map((email) => login(g, email, STRONG_PASSWORD, '198.51.100.200')));
    for (const answer of answers) {
      expect([200, 429]).toContain(answer.status);
      if (answer.status === 429) {
        expect((await answer.json()).error).toBe('rate_limited');
        expect(answer.headers.get('retry-after')).toBe('1');
      }
    }
    // Nothing was counted against the address: every one of them signs in now, one after another.
    for (const email of emails) expect((await login(g, email, STRONG_PASSWORD, '198.51.100.200')).status, email).toBe(200);
  });

  test('one typo among correct logins in flight from the same address locks nothing', async () => {
    const g = await start();
    const emails = Array.from({ length: 4 }, (_, i) => `team${i}@example.com`);
    for (const email of emails) await register(g, email);
    const answers = await Promise.all([
      ...emails.map((email) => login(g, email, STRONG_PASSWORD, '198.51.100.201')),
      login(g, 'team0@example.com', WRONG, '198.51.100.201'),
    ]);
    // No lock. At most a "busy" refusal: while the typo's failure is being counted its attempt is
    // still in flight too, and an attempt reserving in that instant finds five plus one (on a
    // loaded machine the instants meet); it is told to retry in a second, like the test above.
    for (const answer of answers) {
      expect([200, 401, 429]).toContain(answer.status);
      if (answer.status === 429) {
        expect((await answer.json()).error).toBe('rate_limited');
        expect(answer.headers.get('retry-after')).toBe('1');
      }
    }
    for (const email of emails) expect((await login(g, email, STRONG_PASSWORD, '198.51.100.201')).status, email).toBe(200);
  });

  test('an attempt that fails on our side (hash pool full) frees its slot: later logins are not refused', async () => {
    const pool = createHashPool({ size: 1 });
    const bcrypt = createBcryptHasher({ rounds: 4, pool });
    let failing = 5;
    t = await createTestGatehouse(dialect, {
      overrides: {
        hasher: {
          hash: (password) => bcrypt.hash(password),
          needsRehash: (hash) => bcrypt.needsRehash(hash),
          verify: async (password, hash) => {
            if (failing > 0) {
              failing -= 1;
              throw serviceUnavailable('The password checker is busy.');
            }
            return bcrypt.verify(password, hash);
          },
        },
      },
    });
    const g = t;
    await register(g, 'stuck@example.com');
    const refused = await Promise.all(Array.from({ length: 5 }, () => login(g, 'stuck@example.com', STRONG_PASSWORD)));
    expect(refused.map((answer) => answer.status)).toEqual([503, 503, 503, 503, 503]);
    expect((await login(g, 'stuck@example.com', STRONG_PASSWORD)).status).toBe(200);
    await pool.close();
  });

  test('attempts crowding the last slot are refused, not locked: once the in-flight one succeeds, the email is clear', async () => {
    const g = await start();
    await register(g, 'busy@example.com');
    for (let i = 1; i <= 4; i++) await login(g, 'busy@example.com', WRONG, `198.51.100.${10 + i}`);
    // One slot left: of three concurrent logins with the right password, the first to count itself
    // is served; the others are refused while it is in flight, or served after it cleared the
    // count. Afterwards the email's count is clear.
    const answers = await Promise.all([1, 2, 3].map((i) => login(g, 'busy@example.com', STRONG_PASSWORD, `198.51.100.${20 + i}`)));
    const statuses = answers.map((answer) => answer.status);
    expect(statuses).toContain(200);
    expect(statuses.every((status) => status === 200 || status === 429)).toBe(true);
    for (let i = 1; i <= 4; i++) expect((await login(g, 'busy@example.com', WRONG, `198.51.100.${30 + i}`)).status).toBe(401);
    expect((await login(g, 'busy@example.com', STRONG_PASSWORD, '198.51.100.40')).status).toBe(200);
  });

  test('failures spread over a window boundary still add up', async () => {
    const g = await start();
    await register(g, 'edge@example.com');
    g.clock.advance(14 * 60_000);
    for (let i = 1; i <= 3; i++) await login(g, 'edge@example.com', WRONG, `198.51.100.${40 + i}`);
    g.clock.advance(2 * 60_000); // the next 15-minute window
    for (let i = 4; i <= 5; i++) await login(g, 'edge@example.com', WRONG, `198.51.100.${40 + i}`);
    expect((await login(g, 'edge@example.com', STRONG_PASSWORD, '198.51.100.50')).status).toBe(429);
  });

  test('failures older than two lock durations are forgotten', async () => {
    const g = await start();
    await register(g, 'old@example.com');
    for (let i = 1; i <= 4; i++) await login(g, 'old@example.com', WRONG);
    g.clock.advance(30 * 60_000);
    expect((await login(g, 'old@example.com', WRONG)).status).toBe(401);
    expect((await login(g, 'old@example.com', STRONG_PASSWORD)).status).toBe(200);
  });

  test('LOCKOUT_MAX_FAILURES=3 and LOCKOUT_DURATION=2m change the threshold and the duration', async () => {
    const g = await start({ LOCKOUT_MAX_FAILURES: '3', LOCKOUT_DURATION: '2m' });
    await register(g, 'cfg@example.com');
    for (let i = 1; i <= 2; i++) await login(g, 'cfg@example.com', WRONG);
    expect((await login(g, 'cfg@example.com', STRONG_PASSWORD)).status).toBe(200);
    for (let i = 1; i <= 3; i++) expect((await login(g, 'cfg@example.com', WRONG, '198.51.100.60')).status).toBe(401);
    const locked = await login(g, 'cfg@example.com', STRONG_PASSWORD);
    expect(locked.status).toBe(429);
    expect(locked.headers.get('retry-after')).toBe('120');
    g.clock.advance(120_000);
    expect((await login(g, 'cfg@example.com', STRONG_PASSWORD)).status).toBe(200);
  });

  test('audit: the locking failure is marked, a refused login is login_failure with reason locked, and no password is kept', async () => {
    const g = await start();
    await register(g, 'trail@example.com');
    for (let i = 1; i <= 5; i++) await login(g, 'trail@example.com', WRONG, '198.51.100.90');
    await login(g, 'trail@example.com', STRONG_PASSWORD, '198.51.100.90');
    const [refused, locking, before] = await g.gatehouse.stores.audit.listRecentEvents(3);
    expect(refused).toMatchObject({
      type: 'login_failure',
      ip: '198.51.100.90',
      metadata: { email: 'trail@example.com', reason: 'locked', method: 'password' },
    });
    expect(locking).toMatchObject({ type: 'login_failure', metadata: { reason: 'wrong_password', lockStarted: true } });
    expect(before!.metadata).not.toHaveProperty('lockStarted');
    const serialized = JSON.stringify(await g.gatehouse.stores.audit.listRecentEvents(20));
    expect(serialized).not.toContain(STRONG_PASSWORD);
    expect(serialized).not.toContain(WRONG);
  });

  test('loginLock.clearEmail (a completed password reset) lifts the email lock and forgets its failures', async () => {
    const g = await start();
    await register(g, 'reset@example.com');
    for (let i = 1; i <= 5; i++) await login(g, 'reset@example.com', WRONG, `198.51.100.${100 + i}`);
    expect((await login(g, 'reset@example.com', STRONG_PASSWORD, '198.51.100.120')).status).toBe(429);
    await g.gatehouse.loginLock.clearEmail('reset@example.com', g.clock.now());
    expect((await login(g, 'reset@example.com', STRONG_PASSWORD, '198.51.100.120')).status).toBe(200);
  });

  test('a locked login costs no bcrypt work and no user lookup: it answers before the password is checked', async () => {
    // The real bcrypt hasher, counted.
    const counted = createCountingHasher({ poolSize: 1 });
    t = await createTestGatehouse(dialect, { overrides: { hasher: counted.hasher } });
    const g = t;
    for (let i = 1; i <= 5; i++) await login(g, 'cost@example.com', WRONG);
    expect(counted.verifications()).toBe(5);
    for (let i = 1; i <= 3; i++) expect((await login(g, 'cost@example.com', WRONG)).status).toBe(429);
    expect(counted.verifications()).toBe(5);
    await counted.close();
  });
});
