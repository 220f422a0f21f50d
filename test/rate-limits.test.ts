/** Rate limits per client IP (SPEC §8): boundaries, Retry-After, expiry by the clock, configuration. */
import { afterEach, describe, expect, test } from 'vitest';
import { loadConfig } from '../src/config.js';
import { memoryLimiterBackend } from '../src/limits/limiter-backend.js';
import { createRateLimits } from '../src/limits/rate-limits.js';
import { STRONG_PASSWORD, createTestGatehouse, describeEachDialect, type TestGatehouse } from './support/harness.js';

describeEachDialect('rate limits', (dialect) => {
  let t: TestGatehouse | undefined;
  afterEach(async () => {
    await t?.close();
    t = undefined;
  });
  const start = async (env: Record<string, string> = {}): Promise<TestGatehouse> => {
    t = await createTestGatehouse(dialect, { env });
    return t;
  };
  const register = (g: TestGatehouse, email: string, ip?: string) =>
    g.request('POST', '/api/auth/register', { json: { email, password: STRONG_PASSWORD }, ...(ip ? { ip } : {}) });
  const login = (g: TestGatehouse, email: string, password = STRONG_PASSWORD, ip?: string) =>
    g.request('POST', '/api/auth/login', { json: { email, password }, ...(ip ? { ip } : {}) });

  test('POST /register: the 5th request in 15 minutes from one IP is served, the 6th gets 429 rate_limited', async () => {
    const g = await start();
    for (let i = 1; i <= 5; i++) expect((await register(g, `r${i}@example.com`)).status, `request ${i}`).toBe(201);
    const refused = await register(g, 'r6@example.com');
    expect(refused.status).toBe(429);
    expect(await refused.json()).toEqual({ error: 'rate_limited', message: expect.any(String) });
    // The clock stands at the start of a 15-minute window: the whole window is left.
    expect(refused.headers.get('retry-after')).toBe('900');
    // Refused before any work: the account was not created.
    expect((await login(g, 'r6@example.com', STRONG_PASSWORD, '198.51.100.99')).status).toBe(401);
  });

  test('POST /register: another IP has its own allowance', async () => {
    const g = await start();
    for (let i = 1; i <= 5; i++) await register(g, `a${i}@example.com`, '198.51.100.1');
    expect((await register(g, 'a6@example.com', '198.51.100.1')).status).toBe(429);
    expect((await register(g, 'b1@example.com', '198.51.100.2')).status).toBe(201);
  });

  test('Retry-After counts down to the end of the window, and the window ends by moving the clock', async () => {
    const g = await start();
    for (let i = 1; i <= 5; i++) await register(g, `w${i}@example.com`);
    g.clock.advance(10 * 60_000 + 30_000);
    const refused = await register(g, 'w6@example.com');
    expect(refused.status).toBe(429);
    expect(refused.headers.get('retry-after')).toBe('270');
    g.clock.advance(269_000);
    const last = await register(g, 'w7@example.com');
    expect(last.status).toBe(429);
    expect(last.headers.get('retry-after')).toBe('1');
    g.clock.advance(1000);
    expect((await register(g, 'w8@example.com')).status).toBe(201);
  });

  test('POST /login: the 10th request in 15 minutes from one IP is served, the 11th gets 429 even with the right password', async () => {
    // A high lock threshold keeps the login lock out of the way of this count.
    const g = await start({ LOCKOUT_MAX_FAILURES: '100' });
    expect((await register(g, 'count@example.com', '198.51.100.50')).status).toBe(201);
    for (let i = 1; i <= 9; i++) expect((await login(g, 'count@example.com', 'Wrong-Password-1')).status, `request ${i}`).toBe(401);
    expect((await login(g, 'count@example.com')).status).toBe(200);
    const refused = await login(g, 'count@example.com');
    expect(refused.status).toBe(429);
    expect((await refused.json()).error).toBe('rate_limited');
    expect(refused.headers.get('retry-after')).toBe('900');
    g.clock.advance(15 * 60_000);
    expect((await login(g, 'count@example.com')).status).toBe(200);
  });

  test('a refused login is audited as login_failure with reason rate_limited', async () => {
    const g = await start({ RATE_LIMIT_LOGIN: '1/1m' });
    await login(g, 'audit@example.com', 'Wrong-Password-1', '198.51.100.60');
    expect((await login(g, 'audit@example.com', 'Wrong-Password-1', '198.51.100.60')).status).toBe(429);
    const [latest] = await g.gatehouse.stores.audit.listRecentEvents(1);
    expect(latest).toMatchObject({
      type: 'login_failure',
      userId: null,
      ip: '198.51.100.60',
      metadata: { email: 'audit@example.com', reason: 'rate_limited', method: 'password' },
    });
  });

  test('a 400 does not use up the limit: the body is validated before the limit is counted', async () => {
    const g = await start({ RATE_LIMIT_REGISTER: '2/15m', RATE_LIMIT_LOGIN: '2/15m' });
    for (let i = 0; i < 5; i++) {
      expect((await g.request('POST', '/api/auth/register', { json: { email: 'bad', password: STRONG_PASSWORD } })).status).toBe(400);
      expect((await g.request('POST', '/api/auth/login', { json: { email: 'x@example.com' } })).status).toBe(400);
      expect((await g.request('POST', '/api/auth/login', { body: '{not json', headers: { 'content-type': 'application/json' } })).status).toBe(400);
    }
    expect((await register(g, 'v1@example.com')).status).toBe(201);
    expect((await register(g, 'v2@example.com')).status).toBe(201);
    expect((await register(g, 'v3@example.com')).status).toBe(429);
  });

  test('RATE_LIMIT_LOGIN=2/1m: the 3rd login in a minute is refused with Retry-After 60, and a minute later it is served', async () => {
    const g = await start({ RATE_LIMIT_LOGIN: '2/1m' });
    expect((await login(g, 'cfg@example.com', 'Wrong-Password-1')).status).toBe(401);
    expect((await login(g, 'cfg@example.com', 'Wrong-Password-1')).status).toBe(401);
    const refused = await login(g, 'cfg@example.com', 'Wrong-Password-1');
    expect(refused.status).toBe(429);
    expect(refused.headers.get('retry-after')).toBe('60');
    g.clock.advance(60_000);
    expect((await login(g, 'cfg@example.com', 'Wrong-Password-1')).status).toBe(401);
  });

  test('X-Forwarded-For is ignored with TRUST_PROXY=0: a client cannot dodge the limit by inventing addresses', async () => {
    const g = await start({ RATE_LIMIT_REGISTER: '2/15m' });
    const spoofed = (email: string, forwarded: string) =>
      g.request('POST', '/api/auth/register', {
        json: { email, password: STRONG_PASSWORD },
        headers: { 'x-forwarded-for': forwarded },
        ip: '203.0.113.77',
      });
    expect((await spoofed('x1@example.com', '192.0.2.1')).status).toBe(201);
    expect((await spoofed('x2@example.com', '192.0.2.2')).status).toBe(201);
    expect((await spoofed('x3@example.com', '192.0.2.3')).status).toBe(429);
    const events = await g.gatehouse.stores.audit.listRecentEvents(5);
    expect(events.every((event) => event.ip === '203.0.113.77')).toBe(true);
  });

  test('TRUST_PROXY=1: the rightmost X-Forwarded-For entry (added by our proxy) is the client, whatever the client put before it', async () => {
    const g = await start({ TRUST_PROXY: '1', RATE_LIMIT_REGISTER: '2/15m' });
    const viaProxy = (email: string, forwarded: string) =>
      g.request('POST', '/api/auth/register', {
        json: { email, password: STRONG_PASSWORD },
        headers: { 'x-forwarded-for': forwarded },
        ip: '10.0.0.2', // the proxy
      });
    // One client behind the proxy, forging different left-hand entries: one counter.
    expect((await viaProxy('p1@example.com', '1.1.1.1, 198.51.100.8')).status).toBe(201);
    expect((await viaProxy('p2@example.com', '2.2.2.2, 198.51.100.8')).status).toBe(201);
    expect((await viaProxy('p3@example.com', '198.51.100.8')).status).toBe(429);
    // Another client behind the same proxy: its own counter.
    expect((await viaProxy('p4@example.com', '198.51.100.9')).status).toBe(201);
    const events = (await g.gatehouse.stores.audit.listRecentEvents(10)).reverse();
    expect(events.map((event) => event.ip)).toEqual(['198.51.100.8', '198.51.100.8', '198.51.100.9']);
  });

  test('TRUST_PROXY=2: the second entry from the right is the client; a garbage entry falls back to the socket address', async () => {
    const g = await start({ TRUST_PROXY: '2' });
    await g.request('POST', '/api/auth/register', {
      json: { email: 'two@example.com', password: STRONG_PASSWORD },
      headers: { 'x-forwarded-for': '6.6.6.6, 198.51.100.20, 10.0.0.1' },
      ip: '10.0.0.2',
    });
    await g.request('POST', '/api/auth/register', {
      json: { email: 'garbage@example.com', password: STRONG_PASSWORD },
      headers: { 'x-forwarded-for': 'not-an-ip, 10.0.0.1' },
      ip: '10.0.0.2',
    });
    await g.request('POST', '/api/auth/register', {
      json: { email: 'none@example.com', password: STRONG_PASSWORD },
      ip: '::ffff:198.51.100.21',
    });
    const events = (await g.gatehouse.stores.audit.listRecentEvents(10)).reverse();
    expect(events.map((event) => event.ip)).toEqual(['198.51.100.20', '10.0.0.2', '198.51.100.21']);
  });

  test('readiness() names the limiter store: memory on SQLite, postgres on PostgreSQL; GET /readyz only says ready', async () => {
    const g = await start();
    expect(await g.gatehouse.readiness()).toEqual({ status: 'ready', database: 'ok', limiter: dialect === 'postgres' ? 'postgres' : 'memory' });
    const ready = await g.request('GET', '/readyz');
    expect(ready.status).toBe(200);
    expect(await ready.json()).toEqual({ status: 'ready' });
  });

  test('a flood of refused logins: each row once, however many arrive at once (rows written together); the rate limit’s refusals summed up in one row', async () => {
    const g = await start();
    const answers = await Promise.all(Array.from({ length: 120 }, (_, i) => login(g, `flood${i}@example.com`, 'Wrong-Password-1', '198.51.100.7')));
    const statuses = answers.map((answer) => answer.status);
    // RATE_LIMIT_LOGIN 10/15m lets ten through, of which the IP's login lock lets five reach the
    // password check (the 5th failure locks the IP); every other attempt is refused before it.
    expect(statuses.filter((status) => status === 401)).toHaveLength(5);
    expect(statuses.filter((status) => status === 429)).toHaveLength(115);
    // Five failures, five refusals by the lock (each for its own address, so each its first), and
    // of the IP's 110 refusals by the rate limit only the first (src/audit/refusal-counter.ts).
    const failures = (await g.gatehouse.stores.audit.listRecentEvents(500)).filter((event) => event.type === 'login_failure');
    expect(failures).toHaveLength(11);
    expect(new Set(failures.map((event) => event.metadata.email)).size).toBe(11);
    expect(failures.filter((event) => event.metadata.reason === 'rate_limited')).toHaveLength(1);
    expect(failures.every((event) => event.ip === '198.51.100.7')).toBe(true);
    // Once the window is over, one more row says how many the rate limit refused.
    g.clock.advance(15 * 60_000);
    await g.gatehouse.sweep();
    const [summary] = await g.gatehouse.stores.audit.listRecentEvents(1);
    expect(summary).toMatchObject({ type: 'login_failure', ip: '198.51.100.7', metadata: { reason: 'rate_limited', method: 'password', refusedCount: 110 } });
  });
});

describe('refusals remembered by the instance (src/limits/rate-limits.ts)', () => {
  test('a subject refused once is refused again from memory until its window ends, with the same Retry-After; others still count', async () => {
    const refusedNames: string[] = [];
    const limits = createRateLimits(
      memoryLimiterBackend(),
      { ...loadConfig({ JWT_SECRET: 'x'.repeat(32) }).rateLimits, login: { points: 1, durationSeconds: 60 } },
      {
        onRefused: (name) => refusedNames.push(name),
      },
    );
    const ip = { ip: '198.51.100.30' };
    const at = (seconds: number): Date => new Date(Date.UTC(2026, 10, 24, 9, 0, seconds));
    expect(limits.refusedAlready('login', ip, at(0))).toBeNull();
    await limits.consume('login', ip, at(0));
    // Over the limit, but not refused yet: the store decides the first refusal.
    expect(limits.refusedAlready('login', ip, at(1))).toBeNull();
    await expect(limits.consume('login', ip, at(1))).rejects.toMatchObject({ status: 429, code: 'rate_limited', retryAfterSeconds: 59 });
    const again = limits.refusedAlready('login', ip, at(20));
    expect(again).toMatchObject({ status: 429, code: 'rate_limited', retryAfterSeconds: 40 });
    await expect(limits.consume('login', ip, at(30))).rejects.toMatchObject({ code: 'rate_limited', retryAfterSeconds: 30 });
    // Each refusal is counted, from memory or not (the metrics' rate-limit refusals).
    expect(refusedNames).toEqual(['login', 'login', 'login']);
    // Another address, and another limit of the same address, count on their own.
    await limits.consume('login', { ip: '198.51.100.31' }, at(30));
    await limits.consume('register', ip, at(30));
    // The window ends: the address starts afresh.
    expect(limits.refusedAlready('login', ip, at(60))).toBeNull();
    await limits.consume('login', ip, at(60));
  });

  test('at most 10,000 refused subjects are remembered: the oldest is forgotten first, and asked of the store again', async () => {
    const limits = createRateLimits(memoryLimiterBackend(), {
      ...loadConfig({ JWT_SECRET: 'x'.repeat(32) }).rateLimits,
      login: { points: 1, durationSeconds: 3600 },
    });
    const now = new Date(Date.UTC(2026, 10, 24, 9, 0, 0));
    const address = (i: number) => ({ ip: `10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}` });
    for (let i = 0; i <= 10_000; i++) {
      await limits.consume('login', address(i), now);
      await expect(limits.consume('login', address(i), now)).rejects.toMatchObject({ code: 'rate_limited' });
    }
    expect(limits.refusedAlready('login', address(0), now)).toBeNull();
    expect(limits.refusedAlready('login', address(1), now)).toMatchObject({ code: 'rate_limited' });
    expect(limits.refusedAlready('login', address(10_000), now)).toMatchObject({ code: 'rate_limited' });
    // Forgotten, not forgiven: the store still refuses it.
    await expect(limits.consume('login', address(0), now)).rejects.toMatchObject({ code: 'rate_limited' });
  });
});
