/**
 * Rate limits and login locks counted in a real Redis (REDIS_URL): shared by instances, isolated
 * by key prefix, surviving a Redis outage on the in-memory insurance, recovering by themselves.
 * Skipped with a message (from support/services.ts) when no Redis answers.
 */
import { randomBytes } from 'node:crypto';
import net from 'node:net';
import { Writable } from 'node:stream';
import { Redis } from 'ioredis';
import { afterEach, describe, expect, test } from 'vitest';
import { openLimiterBackend } from '../src/limits/limiter-backend.js';
import { createLogger } from '../src/logger.js';
import { STRONG_PASSWORD, createTestGatehouse, type TestGatehouse } from './support/harness.js';
import { redisUrl } from './support/services.js';
import { TcpRelay } from './support/tcp-relay.js';

const WRONG = 'Wrong-Password-1';

async function waitFor(check: () => Promise<boolean>, timeoutMs = 8000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error('condition not reached in time');
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

describe.skipIf(redisUrl === null)('limits in Redis', () => {
  const open: TestGatehouse[] = [];
  const cleanups: Array<() => Promise<void>> = [];
  afterEach(async () => {
    for (const g of open.splice(0)) await g.close();
    for (const cleanup of cleanups.splice(0)) await cleanup();
  });

  const prefix = (): string => `gh-test-${randomBytes(6).toString('hex')}`;
  const start = async (env: Record<string, string>, logs?: string[]): Promise<TestGatehouse> => {
    const overrides = logs
      ? {
          logger: createLogger({
            level: 'info',
            destination: new Writable({
              write(chunk, _encoding, done) {
                logs.push(chunk.toString());
                done();
              },
            }),
          }),
        }
      : {};
    const g = await createTestGatehouse('sqlite', { env: { REDIS_URL: redisUrl!, ...env }, overrides });
    open.push(g);
    return g;
  };
  const register = (g: TestGatehouse, email: string) =>
    g.request('POST', '/api/auth/register', { json: { email, password: STRONG_PASSWORD }, ip: '192.0.2.200' });
  const login = (g: TestGatehouse, email: string, password: string, ip = '203.0.113.10') =>
    g.request('POST', '/api/auth/login', { json: { email, password }, ip });

  test('two instances on one Redis share the login lock: failures spread over both lock at the 5th', async () => {
    const keyPrefix = prefix();
    const a = await start({ REDIS_KEY_PREFIX: keyPrefix });
    const b = await start({ REDIS_KEY_PREFIX: keyPrefix });
    // Separate SQLite databases: the account exists on both, the counters live in Redis only.
    await register(a, 'shared@example.com');
    await register(b, 'shared@example.com');
    for (const [i, g] of [a, b, a, b, a].entries()) {
      expect((await login(g, 'shared@example.com', WRONG, `198.51.100.${i + 1}`)).status, `failure ${i + 1}`).toBe(401);
    }
    for (const g of [a, b]) {
      const locked = await login(g, 'shared@example.com', STRONG_PASSWORD, '198.51.100.50');
      expect(locked.status).toBe(429);
      expect((await locked.json()).error).toBe('account_locked');
      expect(locked.headers.get('retry-after')).toBe('900');
    }
    // The lock's end is read against each instance's clock: moving it past the end unlocks.
    a.clock.advance(15 * 60_000);
    expect((await login(a, 'shared@example.com', STRONG_PASSWORD, '198.51.100.50')).status).toBe(200);
    expect((await login(b, 'shared@example.com', STRONG_PASSWORD, '198.51.100.50')).status).toBe(429);
  });

  test('two instances share the rate limit; another key prefix does not see it', async () => {
    const keyPrefix = prefix();
    const env = { REDIS_KEY_PREFIX: keyPrefix, RATE_LIMIT_REGISTER: '2/15m' };
    const a = await start(env);
    const b = await start(env);
    const other = await start({ ...env, REDIS_KEY_PREFIX: prefix() });
    expect((await register(a, 'one@example.com')).status).toBe(201);
    expect((await register(b, 'two@example.com')).status).toBe(201);
    expect((await register(a, 'three@example.com')).status).toBe(429);
    expect((await register(b, 'three@example.com')).status).toBe(429);
    expect((await register(other, 'three@example.com')).status).toBe(201);
  });

  test('RATE_LIMIT_METRICS counts per instance, not in Redis: Prometheus scrapes each instance, so adding one never spends the budget of another', async () => {
    const env = { REDIS_KEY_PREFIX: prefix(), RATE_LIMIT_METRICS: '3/1m' };
    const a = await start(env);
    const b = await start(env);
    const scrape = (g: TestGatehouse) => g.request('GET', '/metrics', { ip: '203.0.113.20' });
    for (let i = 0; i < 3; i++) {
      expect((await scrape(a)).status).toBe(200);
      expect((await scrape(b)).status).toBe(200);
    }
    expect((await scrape(a)).status).toBe(429);
    expect((await scrape(b)).status).toBe(429);
  });

  test('an address refused once is refused again by that instance without asking Redis, until the window ends; the other instance asks and refuses', async () => {
    const keyPrefix = prefix();
    const env = { REDIS_KEY_PREFIX: keyPrefix, RATE_LIMIT_LOGIN: '2/15m' };
    const a = await start(env);
    const b = await start(env);
    const redis = new Redis(redisUrl!);
    cleanups.push(async () => void (await redis.quit()));
    for (let i = 1; i <= 2; i++) expect((await login(a, `u${i}@example.com`, WRONG)).status).toBe(401);
    expect((await login(a, 'u3@example.com', WRONG)).status).toBe(429);
    const [counter, ...others] = await redis.keys(`${keyPrefix}:rate:login:*`);
    expect(others).toEqual([]);
    expect(await redis.get(counter!)).toBe('3');
    for (let i = 4; i <= 8; i++) {
      const refused = await login(a, `u${i}@example.com`, WRONG);
      expect(refused.status).toBe(429);
      expect((await refused.json()).error).toBe('rate_limited');
    }
    // Refused from a's memory: the shared count was not asked again.
    expect(await redis.get(counter!)).toBe('3');
    // b asks Redis, whose count refuses it too.
    expect((await login(b, 'u9@example.com', WRONG)).status).toBe(429);
    expect(await redis.get(counter!)).toBe('4');
    // Refusals from memory or not, a's trail has the first one's row (src/audit/refusal-counter.ts)…
    const refusals = (await a.gatehouse.stores.audit.listRecentEvents(50)).filter((event) => event.metadata.reason === 'rate_limited');
    expect(refusals).toHaveLength(1);
    // The window ends by the clock: the address counts afresh.
    a.clock.advance(15 * 60_000);
    expect((await login(a, 'u10@example.com', WRONG)).status).toBe(401);
    // …and, once the window is over, one that counts all six.
    await a.gatehouse.sweep();
    const [summary] = await a.gatehouse.stores.audit.listRecentEvents(1);
    expect(summary!.metadata).toMatchObject({ reason: 'rate_limited', refusedCount: 6 });
  });

  test('the counters are in Redis under the key prefix, with an expiry, and hold no email', async () => {
    const keyPrefix = prefix();
    const g = await start({ REDIS_KEY_PREFIX: keyPrefix });
    await login(g, 'counted@example.com', WRONG);
    const redis = new Redis(redisUrl!);
    cleanups.push(async () => void (await redis.quit()));
    const keys = await redis.keys(`${keyPrefix}:*`);
    expect(keys.some((key) => key.startsWith(`${keyPrefix}:rate:login:`))).toBe(true);
    expect(keys.filter((key) => key.startsWith(`${keyPrefix}:login-failures:`))).toHaveLength(2); // email and IP
    for (const key of keys) {
      expect(key).not.toContain('counted@example.com');
      expect(await redis.pttl(key)).toBeGreaterThan(0);
    }
    expect(await g.gatehouse.readiness()).toEqual({ status: 'ready', database: 'ok', limiter: 'redis' });
  });

  test('a count read from Redis (one GET) is what consume, increment, decrement, write and remove left there', async () => {
    const backend = await openLimiterBackend({
      redisUrl: redisUrl!,
      redisTimeoutMs: 1000,
      postgresPool: null,
      keyPrefix: prefix(),
      logger: createLogger({ level: 'silent' }),
    });
    cleanups.push(() => backend.close());
    const limiter = backend.createLimiter({ name: 'counts', points: 10, durationSeconds: 60 });
    expect(await limiter.read('a')).toBe(0);
    await limiter.consume('a');
    await limiter.consume('a');
    expect(await limiter.increment('a')).toBe(3);
    expect(await limiter.read('a')).toBe(3);
    await limiter.decrement('a');
    expect(await limiter.read('a')).toBe(2);
    await limiter.write('b', 7, 60);
    expect(await limiter.read('b')).toBe(7);
    await limiter.remove('b');
    expect(await limiter.read('b')).toBe(0);
    expect(await limiter.read('a')).toBe(2);
    expect(await backend.checkStatus()).toBe('redis');
  });

  test('gatehouse.close() disconnects from Redis', async () => {
    const keyPrefix = prefix();
    const g = await start({ REDIS_KEY_PREFIX: keyPrefix });
    const redis = new Redis(redisUrl!);
    cleanups.push(async () => void (await redis.quit()));
    const named = async (): Promise<number> =>
      ((await redis.client('LIST')) as string).split('\n').filter((line) => line.includes(` name=${keyPrefix} `)).length;
    expect(await named()).toBe(1);
    await open.splice(open.indexOf(g), 1)[0]!.close();
    await waitFor(async () => (await named()) === 0);
  });

  test('when Redis goes away the limits keep working in memory, readiness says degraded, one warning is logged; it recovers by itself and the lock reached in memory holds', async () => {
    const relay = TcpRelay.to(redisUrl!, 6379);
    await relay.open();
    cleanups.push(() => relay.cut());
    const logs: string[] = [];
    const g = await start({ REDIS_URL: `redis://127.0.0.1:${relay.port}`, REDIS_KEY_PREFIX: prefix() }, logs);
    await register(g, 'outage@example.com');
    expect((await g.gatehouse.readiness()).limiter).toBe('redis');

    await relay.cut();
    // The lock still works, on this instance's memory (counted from the outage on).
    for (let i = 1; i <= 5; i++) expect((await login(g, 'outage@example.com', WRONG)).status).toBe(401);
    expect((await login(g, 'outage@example.com', STRONG_PASSWORD)).status).toBe(429);
    const degraded = await g.request('GET', '/readyz');
    expect(degraded.status).toBe(200);
    expect(await degraded.json()).toEqual({ status: 'degraded' });
    expect(await g.gatehouse.readiness()).toEqual({ status: 'degraded', database: 'ok', limiter: 'memory-fallback' });
    expect(logs.filter((line) => line.includes('unreachable'))).toHaveLength(1);
    expect(logs.join('')).not.toContain(STRONG_PASSWORD);

    await relay.open();
    await waitFor(async () => (await g.gatehouse.readiness()).limiter === 'redis');
    expect(logs.filter((line) => line.includes('answers again'))).toHaveLength(1);
    // Back on Redis, whose counters never saw the outage's failures: the lock reached in memory
    // still holds, from any IP, until it ends.
    const stillLocked = await login(g, 'outage@example.com', STRONG_PASSWORD, '203.0.113.11');
    expect(stillLocked.status).toBe(429);
    expect((await stillLocked.json()).error).toBe('account_locked');
    g.clock.advance(15 * 60_000);
    expect((await login(g, 'outage@example.com', STRONG_PASSWORD, '203.0.113.11')).status).toBe(200);
  });

  test('a Redis that does not answer at start: the service starts degraded and still refuses the 6th registration', async () => {
    const closed = net.createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = (closed.address() as net.AddressInfo).port;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    const g = await start({ REDIS_URL: `redis://127.0.0.1:${port}` });
    for (let i = 1; i <= 5; i++) expect((await register(g, `down${i}@example.com`)).status).toBe(201);
    expect((await register(g, 'down6@example.com')).status).toBe(429);
    expect(await g.gatehouse.readiness()).toMatchObject({ status: 'degraded', limiter: 'memory-fallback' });
  });
});
