/**
 * Two server processes (the built CLI, as an operator runs it) on one PostgreSQL, counting in
 * one Redis — and, without Redis, in PostgreSQL: failed logins spread over both instances lock
 * the account at the 5th. Skipped with a message when PostgreSQL (or Redis) does not answer.
 */
import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import pg from 'pg';
import { afterEach, describe, expect, test } from 'vitest';
import { startServerProcess, type ServerProcess } from './support/server-process.js';
import { postgresUrl, redisUrl } from './support/services.js';
import { throwawaySchemaUrl } from './support/throwaway-schema.js';

const WRONG = 'Wrong-Password-1';
const PASSWORD = 'Correct-Horse-9';

const servers: ServerProcess[] = [];
const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => server.stop()));
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

async function serve(env: Record<string, string>): Promise<string> {
  const server = await startServerProcess({ cwd: process.cwd(), env: { BCRYPT_ROUNDS: '4', JWT_SECRET: 'm'.repeat(40), ...env } });
  servers.push(server);
  return server.url;
}

const post = (url: string, path: string, body: unknown): Promise<Response> =>
  fetch(`${url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });

/**
 * How many login counters the instances keep in `store`. /readyz tells the public only its
 * status, so the test looks in the store itself.
 */
async function loginCountersIn(store: 'redis' | 'postgres', env: Record<string, string>): Promise<number> {
  if (store === 'redis') {
    const redis = new Redis(redisUrl!);
    try {
      return (await redis.keys(`${env.REDIS_KEY_PREFIX}:login-*`)).length;
    } finally {
      await redis.quit();
    }
  }
  const client = new pg.Client({ connectionString: env.DATABASE_URL });
  await client.connect();
  try {
    return Number((await client.query(`select count(*) as n from gatehouse_rate_limits where key like 'login-%'`)).rows[0].n);
  } finally {
    await client.end();
  }
}

async function expectLockAtFifthFailure(env: Record<string, string>, expectedLimiter: 'redis' | 'postgres'): Promise<void> {
  const a = await serve(env);
  const b = await serve(env);
  for (const url of [a, b]) expect(await (await fetch(`${url}/readyz`)).json()).toEqual({ status: 'ready' });
  expect((await post(a, '/api/auth/register', { email: 'multi@example.com', password: PASSWORD })).status).toBe(201);
  for (const [i, url] of [a, b, a, b, a].entries()) {
    expect((await post(url, '/api/auth/login', { email: 'multi@example.com', password: WRONG })).status, `failure ${i + 1}`).toBe(401);
  }
  for (const url of [b, a]) {
    const locked = await post(url, '/api/auth/login', { email: 'multi@example.com', password: PASSWORD });
    expect(locked.status).toBe(429);
    expect((await locked.json()).error).toBe('account_locked');
    expect(Number(locked.headers.get('retry-after'))).toBeGreaterThan(890);
  }
  expect(await loginCountersIn(expectedLimiter, env)).toBeGreaterThan(0);
}

/** 20 wrong logins for one email at once, half to each instance: at most 5 reach bcrypt (401), the rest 429. */
async function expectNoRaceAcrossInstances(env: Record<string, string>): Promise<void> {
  const a = await serve(env);
  const b = await serve(env);
  expect((await post(a, '/api/auth/register', { email: 'race@example.com', password: PASSWORD })).status).toBe(201);
  const answers = await Promise.all(
    Array.from({ length: 20 }, (_, i) => post(i % 2 === 0 ? a : b, '/api/auth/login', { email: 'race@example.com', password: WRONG })),
  );
  const statuses = answers.map((answer) => answer.status);
  const checked = statuses.filter((status) => status === 401).length;
  expect(checked, statuses.join(' ')).toBeGreaterThanOrEqual(1);
  expect(checked, statuses.join(' ')).toBeLessThanOrEqual(5);
  expect(statuses.filter((status) => status === 429).length).toBe(20 - checked);
  expect((await post(b, '/api/auth/login', { email: 'race@example.com', password: PASSWORD })).status).toBe(429);
}

describe.skipIf(postgresUrl === null)('two server processes', () => {
  test.skipIf(redisUrl === null)('on one PostgreSQL and one Redis: 20 concurrent wrong logins over both, at most 5 checked', async () => {
    await expectNoRaceAcrossInstances({
      DATABASE_URL: await throwawaySchemaUrl((cleanup) => cleanups.push(cleanup)),
      REDIS_URL: redisUrl!,
      REDIS_KEY_PREFIX: `gh-test-${randomBytes(6).toString('hex')}`,
    });
  });

  test('on one PostgreSQL without Redis: 20 concurrent wrong logins over both, at most 5 checked', async () => {
    await expectNoRaceAcrossInstances({ DATABASE_URL: await throwawaySchemaUrl((cleanup) => cleanups.push(cleanup)) });
  });

  test.skipIf(redisUrl === null)('on one PostgreSQL and one Redis: failed logins spread over both lock the account at the 5th', async () => {
    const env = {
      DATABASE_URL: await throwawaySchemaUrl((cleanup) => cleanups.push(cleanup)),
      REDIS_URL: redisUrl!,
      REDIS_KEY_PREFIX: `gh-test-${randomBytes(6).toString('hex')}`,
    };
    await expectLockAtFifthFailure(env, 'redis');
  });

  test('on one PostgreSQL without Redis: the counters are shared in PostgreSQL', async () => {
    await expectLockAtFifthFailure({ DATABASE_URL: await throwawaySchemaUrl((cleanup) => cleanups.push(cleanup)) }, 'postgres');
  });
});

/**
 * Revocation is immediate across instances although session checks arriving together share one
 * query on PostgreSQL (db/session-store.ts): checks of many sessions at once, some revoked on the
 * other instance just before, each get their own row's answer.
 */
describe.skipIf(postgresUrl === null)('session checks on two server processes', () => {
  test('a session ended on one instance is refused at once on the other, amid concurrent checks of other sessions', async () => {
    const env = { DATABASE_URL: await throwawaySchemaUrl((cleanup) => cleanups.push(cleanup)), RATE_LIMIT_REGISTER: '100/1h' };
    const a = await serve(env);
    const b = await serve(env);
    const cookies: string[] = [];
    for (let i = 0; i < 6; i++) {
      const registered = await post(a, '/api/auth/register', { email: `revoke${i}@example.com`, password: PASSWORD });
      expect(registered.status).toBe(201);
      cookies.push(registered.headers.getSetCookie()[0]!.split(';')[0]!);
    }
    const check = (cookie: string) => fetch(`${b}/api/auth/session`, { headers: { cookie } });
    const burst = (list: string[]) => Promise.all(list.flatMap((cookie) => Array.from({ length: 8 }, () => check(cookie))));

    const before = await burst(cookies);
    expect(before.map((answer) => answer.status)).toEqual(Array(48).fill(200));
    const emails = await Promise.all(before.map(async (answer) => ((await answer.json()) as { user: { email: string } }).user.email));
    expect(emails).toEqual(cookies.flatMap((_, i) => Array(8).fill(`revoke${i}@example.com`)));

    // Sessions 1, 3 and 5 end on A (logout), while B is kept busy checking all six.
    const busy = burst(cookies);
    for (const i of [1, 3, 5]) {
      const logout = await fetch(`${a}/api/auth/logout`, { method: 'POST', headers: { cookie: cookies[i]! } });
      expect(logout.status).toBe(200);
    }
    await busy;
    const after = await burst(cookies);
    expect(after.map((answer) => answer.status)).toEqual(cookies.flatMap((_, i) => Array(8).fill(i % 2 === 1 ? 401 : 200)));
  });
});
