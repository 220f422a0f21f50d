/**
 * @module Where the counters of rate limits and login locks live, through rate-limiter-flexible:
 * this process's memory (one instance), Redis (REDIS_URL is set) or PostgreSQL (DATABASE_URL is
 * PostgreSQL and no Redis; table `gatehouse_rate_limits`, created by the library on first start).
 *
 * A shared store that fails or hangs must not take logins down with it, nor slow them. Each store
 * limiter is guarded by the store's circuit (store-circuit.ts): a call that fails or outlives
 * REDIS_TIMEOUT is answered from this instance's memory, and so is every later call, at once,
 * until a probe off the request path finds the store answering again. Meanwhile limits keep
 * working, but count per instance; the outage is logged once and /readyz reports
 * `memory-fallback`. What was counted in memory still counts, merged into the store's answers,
 * until it expires.
 */
import type { Redis as RedisClient } from 'ioredis';
import type pg from 'pg';
import { RateLimiterMemory, RateLimiterPostgres, RateLimiterRedis } from 'rate-limiter-flexible';
import { requireOptional } from '../lazy-require.js';
import type { Logger } from '../logger.js';
import type { Limiter } from './limiter.js';
import { StoreCircuit, guardedLimiter, type MemoryMerge } from './store-circuit.js';

export type LimiterStoreKind = 'memory' | 'redis' | 'postgres';
/** What /readyz reports: the store in use, or `memory-fallback` while the shared store fails. */
export type LimiterStatus = LimiterStoreKind | 'memory-fallback';

export const POSTGRES_LIMITS_TABLE = 'gatehouse_rate_limits';

/** How long the start waits for Redis before serving on memory (and probing). */
const REDIS_FIRST_CONNECT_WAIT_MS = 2000;
/** /readyz answers within 2 s whatever the stores do (DESIGN §9.7); the database is asked meanwhile. */
const STATUS_CHECK_BOUND_MS = 1500;
const POSTGRES_SWEEP_INTERVAL_MS = 5 * 60_000;

export interface LimiterOptions {
  /** Distinguishes this limiter's keys from every other's in the shared store. */
  name: string;
  points: number;
  /** How long the store keeps a key; the rules' own windows are computed from the clock. */
  durationSeconds: number;
  /**
   * How what was counted in memory during an outage joins the store's values afterwards: `sum`
   * (default) for counts, `max` for a stored instant such as a lock's end (store-circuit.ts).
   */
  memoryMerge?: MemoryMerge;
}

export interface LimiterBackend {
  readonly kind: LimiterStoreKind;
  createLimiter(options: LimiterOptions): Limiter;
  /**
   * Whether the shared store answers now (for /readyz), within 1.5 s: `memory-fallback` at once
   * while its circuit is open, else after asking it.
   */
  checkStatus(): Promise<LimiterStatus>;
  /** Stops probing and disconnects Redis. A PostgreSQL pool belongs to the database handle and is closed there. */
  close(): Promise<void>;
}

export interface OpenLimiterBackendOptions {
  redisUrl: string | null;
  /** REDIS_TIMEOUT: how long one Redis call may take before memory answers instead. */
  redisTimeoutMs: number;
  /** The database's pool when the database is PostgreSQL. */
  postgresPool: pg.Pool | null;
  /** Prefix of every Redis key, so several deployments (or test runs) can share one Redis. */
  keyPrefix: string;
  logger: Logger;
}

/**
 * rate-limiter-flexible reads a Redis count with MULTI, GET, PTTL, EXEC, to report the time left
 * too; the limits only ever use the count (`read`: a login's lock reads, the failure counts). One
 * GET answers the same count: a login refused by its rate limit or its lock then costs Redis three
 * commands instead of nine (docs/performance.md). The answer keeps the library's ioredis shape
 * (`[[error, count], [error, pttl]]`, the time left unknown: -1), which test/limits-redis.test.ts
 * holds to the library through real reads.
 */
class CountReadingRateLimiterRedis extends RateLimiterRedis {
  declare client: RedisClient;

  async _get(rlKey: string): Promise<[[null, string], [null, number]] | null> {
    const points = await this.client.get(rlKey);
    return points === null
      ? null
      : [
          [null, points],
          [null, -1],
        ];
  }
}

function memoryLimiter({ name, points, durationSeconds }: LimiterOptions): RateLimiterMemory {
  return new RateLimiterMemory({ keyPrefix: name, points, duration: durationSeconds });
}

/** The same operations straight on one rate-limiter-flexible limiter: the memory store's. */
function direct(limiter: RateLimiterMemory): Limiter {
  return {
    consume: (key) => limiter.consume(key, 1),
    increment: async (key) => (await limiter.penalty(key, 1)).consumedPoints,
    decrement: async (key) => void (await limiter.reward(key, 1)),
    read: async (key) => (await limiter.get(key))?.consumedPoints ?? 0,
    write: async (key, points, durationSeconds) => void (await limiter.set(key, points, durationSeconds)),
    remove: async (key) => void (await limiter.delete(key)),
  };
}

/** This process's memory: the default store of one instance, and the store of a limit that is per instance by nature. */
export function memoryLimiterBackend(): LimiterBackend {
  return {
    kind: 'memory',
    createLimiter: (options) => direct(memoryLimiter(options)),
    checkStatus: async () => 'memory',
    close: async () => {},
  };
}

/** The status of a shared store for /readyz, from its circuit. */
async function statusOf(kind: 'redis' | 'postgres', circuit: StoreCircuit): Promise<LimiterStatus> {
  return (await circuit.check(STATUS_CHECK_BOUND_MS)) ? kind : 'memory-fallback';
}

async function redisBackend(url: string, options: OpenLimiterBackendOptions): Promise<LimiterBackend> {
  const { Redis } = requireOptional('ioredis') as typeof import('ioredis');
  const redis: RedisClient = new Redis(url, {
    // Never queue commands while disconnected: a login must not wait for Redis to come back.
    enableOfflineQueue: false,
    maxRetriesPerRequest: 1,
    // Every command, the connection's ready check included, fails past REDIS_TIMEOUT: a new
    // connection to a Redis that accepts but never answers is dropped and tried again.
    commandTimeout: options.redisTimeoutMs,
    connectTimeout: REDIS_FIRST_CONNECT_WAIT_MS,
    // Keep reconnecting forever, at most every 2 s: recovery needs no restart.
    retryStrategy: (attempt) => Math.min(attempt * 100, 2000),
    // Names the connection in CLIENT LIST, for operators (and the tests that check close()).
    connectionName: options.keyPrefix,
    // Commands asked for in the same tick (a login's rate limit and lock reads, and those of every
    // other request handled in that tick) leave in one write and come back in one read.
    enableAutoPipelining: true,
  });
  // ioredis reports every failed reconnect as an 'error' event; the circuit logs the outage once.
  redis.on('error', () => {});
  const circuit = new StoreCircuit({
    kind: 'redis',
    logger: options.logger,
    timeoutMs: options.redisTimeoutMs,
    probe: async () => {
      if (redis.status !== 'ready') throw new Error(`not connected (${redis.status})`);
      await redis.ping();
    },
    // A connection that says it is ready but did not answer hangs (a frozen server, a full
    // network buffer): replies that come late, or never, must not hold the next commands, so it
    // is replaced by a fresh one. A refused or lost connection already reconnects by itself.
    onFailure: () => {
      if (redis.status === 'ready') redis.disconnect(true);
    },
  });
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
  if (redis.status !== 'ready') circuit.trip(new Error(`not connected at start (${redis.status})`));

  return {
    kind: 'redis',
    createLimiter: (limiter) => {
      const keyPrefix = `${options.keyPrefix}:${limiter.name}`;
      const store = new CountReadingRateLimiterRedis({
        storeClient: redis,
        keyPrefix,
        points: limiter.points,
        duration: limiter.durationSeconds,
        // Not connected: fail at once (the circuit answers from memory), never wait.
        rejectIfRedisNotReady: true,
        inMemoryBlockOnConsumed: 0,
      });
      return guardedLimiter(store, memoryLimiter({ ...limiter, name: keyPrefix }), circuit, {
        points: limiter.points,
        merge: limiter.memoryMerge ?? 'sum',
      });
    },
    checkStatus: () => statusOf('redis', circuit),
    async close() {
      circuit.close();
      if (redis.status === 'ready') await redis.quit().catch(() => redis.disconnect());
      else redis.disconnect();
    },
  };
}

async function postgresBackend(pool: pg.Pool, options: OpenLimiterBackendOptions): Promise<LimiterBackend> {
  // Calls are bounded by the pool itself (DATABASE_QUERY_TIMEOUT, src/db/connect.ts).
  const circuit = new StoreCircuit({
    kind: 'postgres',
    logger: options.logger,
    timeoutMs: null,
    probe: async () => {
      await pool.query(`select 1 from ${POSTGRES_LIMITS_TABLE} limit 1`);
    },
  });
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
    void (sweeper as unknown as { clearExpired(beforeMs: number): Promise<void> }).clearExpired(Date.now() - 3_600_000).catch(() => {});
  }, POSTGRES_SWEEP_INTERVAL_MS);
  sweep.unref();
  return {
    kind: 'postgres',
    createLimiter: (limiter) => {
      const store = new RateLimiterPostgres({
        storeClient: pool,
        storeType: 'pool',
        tableName: POSTGRES_LIMITS_TABLE,
        tableCreated: true,
        clearExpiredByTimeout: false,
        keyPrefix: limiter.name,
        points: limiter.points,
        duration: limiter.durationSeconds,
        inMemoryBlockOnConsumed: 0,
      });
      return guardedLimiter(store, memoryLimiter(limiter), circuit, { points: limiter.points, merge: limiter.memoryMerge ?? 'sum' });
    },
    checkStatus: () => statusOf('postgres', circuit),
    close: async () => {
      circuit.close();
      clearInterval(sweep);
    },
  };
}

/** Redis when configured, else PostgreSQL when that is the database, else memory (DESIGN §3). */
export async function openLimiterBackend(options: OpenLimiterBackendOptions): Promise<LimiterBackend> {
  if (options.redisUrl !== null) return redisBackend(options.redisUrl, options);
  if (options.postgresPool !== null) return postgresBackend(options.postgresPool, options);
  return memoryLimiterBackend();
}
