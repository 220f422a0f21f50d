/**
 * Hung dependencies (issue 19, DESIGN §9.7): a Redis or a PostgreSQL that accepts connections
 * but never answers costs each request a bounded time, and everything recovers by itself. Two
 * instances share one PostgreSQL schema and one Redis, each reached through a relay the test
 * stalls (support/tcp-relay.ts): nothing gets through, on the connections already open, on new
 * ones, or both. Latencies are measured over a burst and printed (p95, max); the bounds asserted
 * are generous, for a loaded machine. Skipped with a message when PostgreSQL or Redis is missing.
 */
import { randomBytes } from 'node:crypto';
import { Writable } from 'node:stream';
import { Kysely, PostgresDialect, sql } from 'kysely';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { ConfigError, loadConfig, withBoundPort } from '../src/config.js';
import { openDatabase, type DatabaseHandle } from '../src/db/connect.js';
import { createLogger } from '../src/logger.js';
import { startServer } from '../src/server.js';
import { STRONG_PASSWORD, TEST_JWT_SECRET, createTestGatehouse, type TestGatehouse } from './support/harness.js';
import { postgresUrl, redisUrl } from './support/services.js';
import { TcpRelay } from './support/tcp-relay.js';

/** DATABASE_QUERY_TIMEOUT of the instances: short, so the test is too. */
const QUERY_TIMEOUT_MS = 1000;
/** REDIS_TIMEOUT: the default. */
const REDIS_TIMEOUT_MS = 250;
const WRONG = 'Wrong-Password-1';
const NO_RATE_LIMITS = { RATE_LIMIT_REGISTER: '999999999/1s', RATE_LIMIT_LOGIN: '999999999/1s' };
/** What an answer must never reveal: driver codes, addresses, stack frames. */
const INTERNALS = /ECONN|EPIPE|timeout|postgres|Connection terminated|127\.0\.0\.1|\bat .+\(|node_modules|\.ts:\d+/i;

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

async function waitFor(check: () => Promise<boolean>, timeoutMs: number): Promise<number> {
  const started = Date.now();
  while (!(await check())) {
    if (Date.now() - started > timeoutMs) throw new Error(`condition not reached within ${timeoutMs} ms`);
    await sleep(50);
  }
  return Date.now() - started;
}

interface Answer {
  what: string;
  status: number;
  ms: number;
  text: string;
  retryAfter: string | null;
  response: Response;
}

async function timed(what: string, send: () => Promise<Response>): Promise<Answer> {
  const started = performance.now();
  const response = await send();
  const text = await response.text();
  return { what, status: response.status, ms: Math.round(performance.now() - started), text, retryAfter: response.headers.get('retry-after'), response };
}

/** Runs `count` tasks, `concurrency` at a time, and returns their results in task order. */
async function burst<T>(count: number, concurrency: number, task: (i: number) => Promise<T>): Promise<T[]> {
  const results: T[] = new Array(count);
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < count) {
        const i = next++;
        results[i] = await task(i);
      }
    }),
  );
  return results;
}

function percentile(values: readonly number[], p: number): number {
  const sorted = [...values].sort((x, y) => x - y);
  return sorted[Math.max(0, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

function figures(answers: readonly Answer[]): { p95: number; max: number; text: string } {
  const ms = answers.map((a) => a.ms);
  const p95 = percentile(ms, 95);
  const max = Math.max(...ms);
  return { p95, max, text: `${answers.length} answers, p50 ${percentile(ms, 50)} ms, p95 ${p95} ms, max ${max} ms` };
}

/** A 503 as DESIGN §4 fixes it: JSON error shape, Retry-After, nothing internal. */
function expectCleanUnavailable(answer: Answer): void {
  expect(answer.status, `${answer.what}: ${answer.text}`).toBe(503);
  expect(JSON.parse(answer.text), answer.what).toMatchObject({ error: 'service_unavailable' });
  expect(Number(answer.retryAfter), answer.what).toBeGreaterThan(0);
  expect(answer.text, answer.what).not.toMatch(INTERNALS);
}

function logSink(): { lines: string[]; destination: Writable } {
  const lines: string[] = [];
  const destination = new Writable({
    write(chunk, _encoding, done) {
      lines.push(chunk.toString());
      done();
    },
  });
  return { lines, destination };
}

describe.skipIf(postgresUrl === null || redisUrl === null)('hung dependencies: two instances on one PostgreSQL and one Redis', () => {
  const pgRelay = TcpRelay.to(postgresUrl ?? 'postgres://127.0.0.1:5432', 5432);
  const redisRelay = TcpRelay.to(redisUrl ?? 'redis://127.0.0.1:6379', 6379);
  const schema = `gh_test_${randomBytes(6).toString('hex')}`;
  let admin: Kysely<unknown>;
  /** The shared schema, reached directly (never through the relay), to read what was written. */
  let direct: DatabaseHandle;
  let a: TestGatehouse;
  let b: TestGatehouse;
  const logs: Record<'a' | 'b', string[]> = { a: [], b: [] };

  const instance = async (name: 'a' | 'b', keyPrefix: string): Promise<TestGatehouse> => {
    const sink = logSink();
    logs[name] = sink.lines;
    const database = openDatabase(
      { kind: 'postgres', connectionString: pgRelay.urlFor(postgresUrl!) },
      { postgresSchema: schema, poolSize: 5, queryTimeoutMs: QUERY_TIMEOUT_MS },
    );
    return createTestGatehouse('sqlite', {
      env: { REDIS_URL: redisRelay.urlFor(redisUrl!), REDIS_KEY_PREFIX: keyPrefix, ...NO_RATE_LIMITS },
      overrides: { database, logger: createLogger({ level: 'info', destination: sink.destination }) },
    });
  };

  beforeAll(async () => {
    await pgRelay.open();
    await redisRelay.open();
    admin = new Kysely<unknown>({ dialect: new PostgresDialect({ pool: new pg.Pool({ connectionString: postgresUrl!, max: 1 }) }) });
    await sql`create schema ${sql.id(schema)}`.execute(admin);
    direct = openDatabase({ kind: 'postgres', connectionString: postgresUrl! }, { postgresSchema: schema, poolSize: 2 });
    const keyPrefix = `gh-hung-${randomBytes(6).toString('hex')}`;
    // One after the other: the first applies the migrations to the shared schema.
    a = await instance('a', keyPrefix);
    b = await instance('b', keyPrefix);
  });
  afterAll(async () => {
    await pgRelay.unstall();
    await redisRelay.unstall();
    await a?.close();
    await b?.close();
    await direct?.close();
    await sql`drop schema if exists ${sql.id(schema)} cascade`.execute(admin);
    await admin.destroy();
    await pgRelay.cut();
    await redisRelay.cut();
  });

  const register = (g: TestGatehouse, email: string, ip = '192.0.2.1') =>
    timed(`register ${email}`, () => g.request('POST', '/api/auth/register', { json: { email, password: STRONG_PASSWORD }, ip }));
  const login = (g: TestGatehouse, email: string, password: string, ip: string) =>
    timed(`login ${email} from ${ip}`, () => g.request('POST', '/api/auth/login', { json: { email, password }, ip }));
  const bothReady = async (): Promise<boolean> =>
    (await Promise.all([a, b].map((g) => g.gatehouse.readiness()))).every((readiness) => readiness.status === 'ready');

  /** Every registration answered 503 left no account, or a complete one (token and email queued). */
  async function expectNothingHalfWritten(refused: readonly string[]): Promise<number> {
    let complete = 0;
    for (const email of refused) {
      const user = await direct.kysely.selectFrom('users').select('id').where('email', '=', email).executeTakeFirst();
      if (user === undefined) continue;
      complete++;
      expect(await direct.kysely.selectFrom('email_verification_tokens').select('id').where('user_id', '=', user.id).executeTakeFirst(), email).toBeDefined();
      expect(await direct.kysely.selectFrom('email_outbox').select('id').where('recipient', '=', email).executeTakeFirst(), email).toBeDefined();
    }
    return complete;
  }

  test(
    'Redis stalls: each limited request waits at most REDIS_TIMEOUT, once, then not at all; degraded, recovered by itself; a lock reached in memory holds',
    { timeout: 60_000 },
    async () => {
      const email = 'redis-hang@example.com';
      expect((await register(a, email)).status).toBe(201);
      expect(await a.gatehouse.readiness()).toEqual({ status: 'ready', database: 'ok', limiter: 'redis' });
      expect(await b.gatehouse.readiness()).toEqual({ status: 'ready', database: 'ok', limiter: 'redis' });

      redisRelay.stall('all');
      // Correct logins over both instances, four at a time, each from its own IP: every one goes
      // through the rate limit and every step of the login lock (src/limits/login-lock.ts).
      const answers = await burst(40, 4, (i) => login([a, b][i % 2]!, email, STRONG_PASSWORD, `198.51.100.${i + 1}`));
      const burstFigures = figures(answers);
      console.info(`Redis stalled (REDIS_TIMEOUT ${REDIS_TIMEOUT_MS} ms), correct logins over two instances: ${burstFigures.text}`);
      expect(answers.map((answer) => answer.status)).toEqual(answers.map(() => 200));
      // Without the circuit, each of a login's limiter calls waited for the store: seconds each.
      expect(burstFigures.p95).toBeLessThan(1000);
      expect(burstFigures.max).toBeLessThan(2500);

      for (const g of [a, b]) {
        const degraded = await g.request('GET', '/readyz');
        expect(degraded.status).toBe(200);
        expect(await degraded.json()).toEqual({ status: 'degraded' });
        expect(await g.gatehouse.readiness()).toEqual({ status: 'degraded', database: 'ok', limiter: 'memory-fallback' });
      }

      // Failures counted in memory while degraded still count toward the lock afterwards.
      const partly = 'redis-partly@example.com';
      expect((await register(a, partly)).status).toBe(201);
      for (let i = 1; i <= 3; i++) expect((await login(a, partly, WRONG, `203.0.113.${20 + i}`)).status, `failure ${i}`).toBe(401);

      // The lock still works while degraded, on this instance's memory.
      for (let i = 1; i <= 5; i++) expect((await login(a, email, WRONG, `203.0.113.${i}`)).status, `failure ${i}`).toBe(401);
      expect((await login(a, email, STRONG_PASSWORD, '203.0.113.50')).status).toBe(429);

      await redisRelay.unstall();
      const recoveryMs = await waitFor(bothReady, 10_000);
      console.info(`Redis: both instances ready again ${recoveryMs} ms after the stall ended`);
      for (const name of ['a', 'b'] as const) {
        expect(
          logs[name].filter((line) => line.includes('rate limit store (redis) is unreachable')),
          name,
        ).toHaveLength(1);
        expect(
          logs[name].filter((line) => line.includes('rate limit store (redis) answers again')),
          name,
        ).toHaveLength(1);
      }

      // Redis never saw those failures, yet the lock reached in memory holds until it ends.
      const stillLocked = await login(a, email, STRONG_PASSWORD, '203.0.113.51');
      expect(stillLocked.status).toBe(429);
      expect(JSON.parse(stillLocked.text).error).toBe('account_locked');

      // 3 failures in memory + 2 in Redis: the 5th locks, and the lock, written to Redis, holds on both.
      for (let i = 4; i <= 5; i++) expect((await login(a, partly, WRONG, `203.0.113.${20 + i}`)).status, `failure ${i}`).toBe(401);
      for (const g of [a, b]) expect((await login(g, partly, STRONG_PASSWORD, '203.0.113.52')).status).toBe(429);

      // And the counters are shared again: failures spread over both instances lock at the 5th.
      const shared = 'redis-after@example.com';
      expect((await register(b, shared)).status).toBe(201);
      for (const [i, g] of [a, b, a, b, a].entries()) expect((await login(g, shared, WRONG, `203.0.113.${60 + i}`)).status, `failure ${i + 1}`).toBe(401);
      for (const g of [b, a]) expect((await login(g, shared, STRONG_PASSWORD, '203.0.113.70')).status).toBe(429);
    },
  );

  test(
    'PostgreSQL stalls on the open connections: those requests get 503 within DATABASE_QUERY_TIMEOUT, the pools replace the connections, nothing is half-written',
    { timeout: 60_000 },
    async () => {
      // Both pools hold several open connections before the stall.
      await Promise.all([a, b].flatMap((g) => Array.from({ length: 8 }, () => g.request('GET', '/readyz'))));

      pgRelay.stall('existing');
      const answers = await burst(30, 6, (i) => register([a, b][i % 2]!, `pg-existing-${i}@example.com`, `198.51.100.${100 + (i % 50)}`));
      const burstFigures = figures(answers);
      const refused = answers.filter((answer) => answer.status === 503);
      console.info(
        `PostgreSQL stalled on open connections (DATABASE_QUERY_TIMEOUT ${QUERY_TIMEOUT_MS} ms), registrations: ${burstFigures.text}; ${refused.length} × 503`,
      );
      for (const answer of answers) {
        expect([201, 503], `${answer.what}: ${answer.text}`).toContain(answer.status);
        if (answer.status === 503) expectCleanUnavailable(answer);
      }
      // At least the requests that met a stalled connection were refused, each after about one timeout.
      expect(refused.length).toBeGreaterThan(0);
      expect(burstFigures.max).toBeLessThan(QUERY_TIMEOUT_MS + 3000);

      // The stalled connections were destroyed, not put back: new ones work, on both instances.
      const after = await burst(10, 2, (i) => register([a, b][i % 2]!, `pg-existing-after-${i}@example.com`, '198.51.100.200'));
      expect(after.map((answer) => `${answer.what} ${answer.status}`)).toEqual(after.map((answer) => `${answer.what} 201`));
      expect(figures(after).max).toBeLessThan(QUERY_TIMEOUT_MS);

      const complete = await expectNothingHalfWritten(refused.map((answer) => answer.what.replace('register ', '')));
      for (const answer of answers.filter((x) => x.status === 201)) {
        expect((await login(a, answer.what.replace('register ', ''), STRONG_PASSWORD, '203.0.113.99')).status, answer.what).toBe(200);
      }
      console.info(`PostgreSQL: of the ${refused.length} registrations answered 503, ${complete} had committed completely, none in part`);
      await pgRelay.unstall();
      await waitFor(bothReady, 10_000);
    },
  );

  test(
    'PostgreSQL stalls on every connection: every request 503 within a bound, /readyz within 2 s; it recovers by itself, nothing half-written',
    { timeout: 60_000 },
    async () => {
      const known = 'pg-known@example.com';
      const registered = await register(a, known);
      expect(registered.status).toBe(201);
      const cookie = registered.response.headers.getSetCookie()[0]!.split(';')[0]!;

      pgRelay.stall('all');
      const answers = await burst(30, 6, (i) =>
        i % 3 === 2
          ? timed(`session ${i}`, () => [a, b][i % 2]!.request('GET', '/api/auth/session', { cookie }))
          : register([a, b][i % 2]!, `pg-all-${i}@example.com`, `198.51.100.${150 + (i % 50)}`),
      );
      const readyz = await Promise.all([a, b].map((g) => timed('readyz', () => g.request('GET', '/readyz'))));
      const details = await Promise.all([a, b].map((g) => g.gatehouse.readiness()));
      const burstFigures = figures(answers);
      console.info(
        `PostgreSQL stalled on every connection (DATABASE_QUERY_TIMEOUT ${QUERY_TIMEOUT_MS} ms): ${burstFigures.text}, all 503; ` +
          `/readyz answered 503 in ${readyz.map((r) => r.ms).join(' and ')} ms`,
      );
      for (const answer of answers) expectCleanUnavailable(answer);
      // A stalled pooled connection is given up after the timeout (and half a second of grace), a
      // new one after 3 s of trying to connect; never the 10 s and more of before.
      expect(burstFigures.p95).toBeLessThan(4500);
      expect(burstFigures.max).toBeLessThan(6000);
      for (const r of readyz) {
        expect(r.status).toBe(503);
        expect(JSON.parse(r.text)).toEqual({ status: 'unavailable' });
        expect(r.ms).toBeLessThan(2000);
      }
      for (const detail of details) expect(detail).toMatchObject({ status: 'unavailable', database: 'unreachable', limiter: 'redis' });

      await pgRelay.unstall();
      const recoveryMs = await waitFor(async () => (await Promise.all([a, b].map((g) => g.request('GET', '/readyz')))).every((r) => r.status === 200), 10_000);
      console.info(`PostgreSQL: /readyz 200 on both instances ${recoveryMs} ms after the stall ended`);
      for (const [i, g] of [a, b].entries()) {
        expect((await register(g, `pg-all-after-${i}@example.com`)).status).toBe(201);
        expect((await timed('session', () => g.request('GET', '/api/auth/session', { cookie }))).status).toBe(200);
      }
      expect((await login(b, known, STRONG_PASSWORD, '203.0.113.98')).status).toBe(200);
      await expectNothingHalfWritten(answers.filter((answer) => answer.what.startsWith('register')).map((answer) => answer.what.replace('register ', '')));
      for (const name of ['a', 'b'] as const) {
        expect(
          logs[name].some((line) => line.includes('readiness changed from ready to unavailable')),
          name,
        ).toBe(true);
      }
    },
  );
});

describe('REDIS_TIMEOUT and DATABASE_QUERY_TIMEOUT', () => {
  const problemsOf = (env: Record<string, string>): string[] => {
    try {
      loadConfig(env);
      return [];
    } catch (error) {
      if (error instanceof ConfigError) return error.problems;
      throw error;
    }
  };

  test('take a duration with a unit (ms, s, m); a bare number is seconds; the defaults are 250 ms and 5 s', () => {
    expect(loadConfig({})).toMatchObject({ redisTimeoutMs: 250, databaseQueryTimeoutMs: 5000 });
    expect(loadConfig({ REDIS_TIMEOUT: '100ms', DATABASE_QUERY_TIMEOUT: '2' })).toMatchObject({ redisTimeoutMs: 100, databaseQueryTimeoutMs: 2000 });
    expect(loadConfig({ REDIS_TIMEOUT: '1s', DATABASE_QUERY_TIMEOUT: '1m' })).toMatchObject({ redisTimeoutMs: 1000, databaseQueryTimeoutMs: 60_000 });
  });

  test('anything else, or out of range, stops the start naming the variable', () => {
    for (const value of ['0ms', '5x', '-1', '1.5s', 'soon', '2m']) {
      expect(problemsOf({ REDIS_TIMEOUT: value }), value).toEqual([expect.stringMatching(/^REDIS_TIMEOUT: expected a duration from 10ms to 60s/)]);
    }
    for (const value of ['50ms', '2h', 'x']) {
      expect(problemsOf({ DATABASE_QUERY_TIMEOUT: value }), value).toEqual([expect.stringMatching(/^DATABASE_QUERY_TIMEOUT: expected a duration/)]);
    }
  });
});

describe('PORT=0 without BASE_URL', () => {
  test('only a BASE_URL left unset with PORT=0 takes the bound port', () => {
    expect(withBoundPort(loadConfig({ PORT: '0' }), 4321)).toMatchObject({ port: 4321, baseUrl: 'http://localhost:4321' });
    const explicit = loadConfig({ PORT: '0', BASE_URL: 'https://auth.example.com' });
    expect(withBoundPort(explicit, 4321)).toBe(explicit);
    const fixed = loadConfig({ PORT: '8080' });
    expect(withBoundPort(fixed, 8080)).toBe(fixed);
  });

  test('links, the allowed origin and the OAuth callback name the port actually bound', async () => {
    const config = loadConfig({
      NODE_ENV: 'development',
      PORT: '0',
      DATABASE_URL: 'sqlite::memory:',
      JWT_SECRET: TEST_JWT_SECRET,
      BCRYPT_ROUNDS: '4',
      LOG_LEVEL: 'silent',
      GITHUB_CLIENT_ID: 'port-zero-client',
      GITHUB_CLIENT_SECRET: 'port-zero-secret',
      AUTH_SECRET: 'port-zero-auth-secret-0123456789',
      ENCRYPTION_KEY_BASE64: randomBytes(32).toString('base64'),
    });
    expect(config.baseUrl).toBe('http://localhost:0');
    const running = await startServer(config, { logger: createLogger({ level: 'silent' }), mailer: null });
    try {
      const { port } = new URL(running.url);
      expect(Number(port)).toBeGreaterThan(0);
      const base = `http://localhost:${port}`;
      expect(running.gatehouse.config.baseUrl).toBe(base);

      // A browser on that address is same-origin: the cross-site guard lets it register.
      const registered = await fetch(`${running.url}/api/auth/register`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', origin: base },
        body: JSON.stringify({ email: 'port-zero@example.com', password: STRONG_PASSWORD }),
      });
      expect(registered.status).toBe(201);
      expect(((await registered.json()) as { verificationUrl: string }).verificationUrl).toMatch(new RegExp(`^${base}/`));

      const started = await fetch(`${running.url}/api/auth/oauth/github`, { redirect: 'manual' });
      expect(started.status).toBe(302);
      const redirectUri = new URL(started.headers.get('location')!).searchParams.get('redirect_uri');
      expect(redirectUri).toBe(`${base}/api/auth/callback/github`);
    } finally {
      await running.stop();
    }
  });
});
