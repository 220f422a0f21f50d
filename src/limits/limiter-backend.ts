/**
 * @module Where the counters of rate limits and login locks live, through rate-limiter-flexible:
 * this process's memory (one instance), Redis (REDIS_URL is set) or PostgreSQL (DATABASE_URL is
 * PostgreSQL and no Redis; table `gatehouse_rate_limits`, created by the library on first start).
 *
 * A shared store that fails must not take logins down with it. Each store limiter therefore has
 * an in-memory `insuranceLimiter` that answers while the store does not: limits keep working, but
 * count per instance. The first fallback is logged once, /readyz reports `memory-fallback`, and
 * the store is used again as soon as it answers (ioredis reconnects by itself; PostgreSQL is
 * tried on every call). Counts made in memory during an outage are not copied back.
 */
import type { Redis as RedisClient } from 'ioredis';
import type pg from 'pg';
import { RateLimiterMemory, RateLimiterPostgres, RateLimiterRedis, type RateLimiterAbstract, type RateLimiterRes } from 'rate-limiter-flexible';
import { requireOptional } from '../lazy-require.js';
import type { Logger } from '../logger.js';

export type LimiterStoreKind = 'memory' | 'redis' | 'postgres';
/** What /readyz reports: the store in use, or `memory-fallback` while the shared store fails. */
export type LimiterStatus = LimiterStoreKind | 'memory-fallback';

export const POSTGRES_LIMITS_TABLE = 'gatehouse_rate_limits';

/** How long one Redis command may take before the in-memory insurance answers instead. */
const REDIS_COMMAND_TIMEOUT_MS = 500;
/** How long the start waits for Redis before serving on the insurance limiter. */
const REDIS_FIRST_CONNECT_WAIT_MS = 2000;
const POSTGRES_SWEEP_INTERVAL_MS = 5 * 60_000;

export interface LimiterOptions {
  /** Distinguishes this limiter's keys from every other's in the shared store. */
  name: string;
  points: number;
  /** How long the store keeps a key; the rules' own windows are computed from the clock. */
  durationSeconds: number;
}

/** The part of a rate-limiter-flexible limiter the limits use. */
export interface Limiter {
  /** Resolves with the new count; rejects with a RateLimiterRes past `points`. */
  consume(key: string): Promise<RateLimiterRes>;
  /** Adds one and resolves with the new count; never refuses. Atomic in every store. */
  increment(key: string): Promise<number>;
  /** Takes one back (a reservation that turned out not to count). Atomic in every store. */
  decrement(key: string): Promise<void>;
  /** The stored count, 0 when absent. */
  read(key: string): Promise<number>;
  write(key: string, points: number, durationSeconds: number): Promise<void>;
  remove(key: string): Promise<void>;
}

export interface LimiterBackend {
  readonly kind: LimiterStoreKind;
  createLimiter(options: LimiterOptions): Limiter;
  /** Asks the shared store whether it answers now (for /readyz). */
  checkStatus(): Promise<LimiterStatus>;
  /** Disconnects Redis. A PostgreSQL pool belongs to the database handle and is closed there. */
  close(): Promise<void>;
}

export interface OpenLimiterBackendOptions {
  redisUrl: string | null;
  /** The database's pool when the database is PostgreSQL. */
  postgresPool: pg.Pool | null;
  /** Prefix of every Redis key, so several deployments (or test runs) can share one Redis. */
  keyPrefix: string;
  logger: Logger;
}

type CallOptions = { [key: string | symbol]: unknown };
const ANSWERED_BY_INSURANCE = Symbol('answeredByInsurance');

/**
 * rate-limiter-flexible calls the insurance limiter with the very options object the caller
 * passed, and gives no other sign that it fell back. Marking that object tells each call who
 * answered it, precisely, even under concurrency.
 */
class InsuranceLimiter extends RateLimiterMemory {
  override consume(key: string | number, points?: number, options: CallOptions = {}): Promise<RateLimiterRes> {
    options[ANSWERED_BY_INSURANCE] = true;
    return super.consume(key, points, options);
  }
  override penalty(key: string | number, points?: number, options: CallOptions = {}): Promise<RateLimiterRes> {
    options[ANSWERED_BY_INSURANCE] = true;
    return super.penalty(key, points, options);
  }
  override reward(key: string | number, points?: number, options: CallOptions = {}): Promise<RateLimiterRes> {
    options[ANSWERED_BY_INSURANCE] = true;
    return super.reward(key, points, options);
  }
  override get(key: string | number, options: CallOptions = {}): Promise<RateLimiterRes | null> {
    options[ANSWERED_BY_INSURANCE] = true;
    return super.get(key, options);
  }
  override set(key: string | number, points: number, secDuration: number, options: CallOptions = {}): Promise<RateLimiterRes> {
    options[ANSWERED_BY_INSURANCE] = true;
    return super.set(key, points, secDuration, options);
  }
  override delete(key: string | number, options: CallOptions = {}): Promise<boolean> {
    options[ANSWERED_BY_INSURANCE] = true;
    return super.delete(key, options);
  }
}

/** Degraded or not, with one log line per change (not one per request). */
class StoreHealth {
  #degraded = false;

  constructor(
    private readonly kind: LimiterStoreKind,
    private readonly logger: Logger,
  ) {}

  get degraded(): boolean {
    return this.#degraded;
  }

  observe(answeredByStore: boolean): void {
    if (answeredByStore && this.#degraded) {
      this.#degraded = false;
      this.logger.info({ limiterStore: this.kind }, `rate limit store (${this.kind}) answers again; limits are shared across instances again`);
    } else if (!answeredByStore && !this.#degraded) {
      this.#degraded = true;
      this.logger.warn({ limiterStore: this.kind }, `rate limit store (${this.kind}) is unreachable; counting in this instance's memory until it returns`);
    }
  }
}

function wrap(limiter: RateLimiterAbstract, health: StoreHealth | null): Limiter {
  // Each call gets its own options object, so the insurance mark belongs to that call only.
  const tracked = async <T>(call: (options: CallOptions) => Promise<T>): Promise<T> => {
    const options: CallOptions = {};
    try {
      return await call(options);
    } finally {
      health?.observe(options[ANSWERED_BY_INSURANCE] !== true);
    }
  };
  return {
    consume: (key) => tracked((options) => limiter.consume(key, 1, options)),
    increment: async (key) => (await tracked((options) => limiter.penalty(key, 1, options))).consumedPoints,
    decrement: async (key) => {
      await tracked((options) => limiter.reward(key, 1, options));
    },
    read: async (key) => (await tracked((options) => limiter.get(key, options)))?.consumedPoints ?? 0,
    write: async (key, points, durationSeconds) => {
      await tracked((options) => limiter.set(key, points, durationSeconds, options));
    },
    remove: async (key) => {
      await tracked((options) => limiter.delete(key, options));
    },
  };
}

function memoryBackend(): LimiterBackend {
  return {
    kind: 'memory',
    createLimiter: ({ name, points, durationSeconds }) => wrap(new RateLimiterMemory({ keyPrefix: name, points, duration: durationSeconds }), null),
    checkStatus: async () => 'memory',
    close: async () => {},
  };
}

async function redisBackend(url: string, options: OpenLimiterBackendOptions): Promise<LimiterBackend> {
  const health = new StoreHealth('redis', options.logger);
  const { Redis } = requireOptional('ioredis') as typeof import('ioredis');
  const redis: RedisClient = new Redis(url, {
    // Never queue commands while disconnected: a login must not wait for Redis to come back.
    enableOfflineQueue: false,
    maxRetriesPerRequest: 1,
    commandTimeout: REDIS_COMMAND_TIMEOUT_MS,
    connectTimeout: REDIS_FIRST_CONNECT_WAIT_MS,
    // Keep reconnecting forever, at most every 2 s: recovery needs no restart.
    retryStrategy: (attempt) => Math.min(attempt * 100, 2000),
    // Names the connection in CLIENT LIST, for operators (and the tests that check close()).
    connectionName: options.keyPrefix,
  });
  // ioredis reports every failed reconnect as an 'error' event; StoreHealth logs the outage once.
  redis.on('error', () => {});
  await new Promise<void>((resolve) => {
    const done = (): void => {
      clearTimeout(timer);
      redis.off('ready', done);
      redis.off('error', done);
      resolve();
    };
    const timer = setTimeout(done, REDIS_FIRST_CONNECT_WAIT_MS);
    redis.once('ready', done);
    redis.once('error', done);
  });
  if (redis.status !== 'ready') health.observe(false);

  return {
    kind: 'redis',
    createLimiter: ({ name, points, durationSeconds }) => {
      const keyPrefix = `${options.keyPrefix}:${name}`;
      return wrap(
        new RateLimiterRedis({
          storeClient: redis,
          keyPrefix,
          points,
          duration: durationSeconds,
          rejectIfRedisNotReady: true,
          inMemoryBlockOnConsumed: 0,
          insuranceLimiter: new InsuranceLimiter({ keyPrefix, points, duration: durationSeconds }),
        }),
        health,
      );
    },
    async checkStatus() {
      try {
        await redis.ping();
        health.observe(true);
      } catch {
        health.observe(false);
      }
      return health.degraded ? 'memory-fallback' : 'redis';
    },
    async close() {
      if (redis.status === 'ready') await redis.quit().catch(() => redis.disconnect());
      else redis.disconnect();
    },
  };
}

async function postgresBackend(pool: pg.Pool, options: OpenLimiterBackendOptions): Promise<LimiterBackend> {
  const health = new StoreHealth('postgres', options.logger);
  // The first limiter creates the shared table (IF NOT EXISTS; a concurrent creation by another
  // instance is tolerated by the library) and then only sweeps rows expired an hour ago. The
  // sweep runs on our timer, not the library's, so that close() can stop it.
  const sweeper = await new Promise<RateLimiterPostgres>((resolve, reject) => {
    const limiter: RateLimiterPostgres = new RateLimiterPostgres(
      {
        storeClient: pool,
        storeType: 'pool',
        tableName: POSTGRES_LIMITS_TABLE,
        clearExpiredByTimeout: false,
        keyPrefix: 'sweeper',
        points: 1,
        duration: 1,
      },
      (error) => (error ? reject(error) : resolve(limiter)),
    );
  });
  const sweep = setInterval(() => {
    // Store expiry is wall-clock time by the library's design; the rules never depend on it.
    void (sweeper as unknown as { clearExpired(beforeMs: number): Promise<void> }).clearExpired(Date.now() - 3_600_000);
  }, POSTGRES_SWEEP_INTERVAL_MS);
  sweep.unref();
  return {
    kind: 'postgres',
    createLimiter: ({ name, points, durationSeconds }) =>
      wrap(
        new RateLimiterPostgres({
          storeClient: pool,
          storeType: 'pool',
          tableName: POSTGRES_LIMITS_TABLE,
          tableCreated: true,
          clearExpiredByTimeout: false,
          keyPrefix: name,
          points,
          duration: durationSeconds,
          inMemoryBlockOnConsumed: 0,
          insuranceLimiter: new InsuranceLimiter({ keyPrefix: name, points, duration: durationSeconds }),
        }),
        health,
      ),
    async checkStatus() {
      try {
        await pool.query(`select 1 from ${POSTGRES_LIMITS_TABLE} limit 1`);
        health.observe(true);
      } catch {
        health.observe(false);
      }
      return health.degraded ? 'memory-fallback' : 'postgres';
    },
    close: async () => {
      clearInterval(sweep);
    },
  };
}

/** Redis when configured, else PostgreSQL when that is the database, else memory (DESIGN §3). */
export async function openLimiterBackend(options: OpenLimiterBackendOptions): Promise<LimiterBackend> {
  if (options.redisUrl !== null) return redisBackend(options.redisUrl, options);
  if (options.postgresPool !== null) return postgresBackend(options.postgresPool, options);
  return memoryBackend();
}
