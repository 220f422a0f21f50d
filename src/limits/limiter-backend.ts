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

/**
 * A short list of plain members (client IPs under a lock) with the instant each entry ends, that
 * can be enumerated: the limiters' keys are hashes and cannot (subject.ts). Only an index for
 * operators: the limiter that holds the lock decides whether it holds, so an entry left behind by
 * an outage or another instance shows nothing once its lock is gone.
 */
export interface LockList {
  add(member: string, untilMs: number): Promise<void>;
  /** Members whose entry ends after `nowMs`, at most `max` of them. */
  list(nowMs: number, max: number): Promise<string[]>;
  remove(member: string): Promise<void>;
}

/** Entries kept in memory at most: a flood of locked addresses cannot grow the process without bound. */
const MEMORY_LOCK_LIST_MAX = 10_000;

function memoryLockList(): LockList {
  const entries = new Map<string, number>();
  return {
    async add(member, untilMs) {
      entries.delete(member);
      // Full: the oldest entry makes room (a Map keeps insertion order).
      const oldest = entries.keys().next();
      if (entries.size >= MEMORY_LOCK_LIST_MAX && oldest.done !== true) entries.delete(oldest.value);
      entries.set(member, untilMs);
    },
    async list(nowMs, max) {
      return [...entries]
        .filter(([, until]) => until > nowMs)
        .slice(-max)
        .map(([member]) => member);
    },
    async remove(member) {
      entries.delete(member);
    },
  };
}

/**
 * A shared list, mirrored in memory: while the store fails, what this instance locked is still
 * listed (a store failure is never a login's failure, so it is swallowed here).
 */
function mirroredLockList(shared: LockList): LockList {
  const memory = memoryLockList();
  return {
    async add(member, untilMs) {
      await memory.add(member, untilMs);
      await shared.add(member, untilMs).catch(() => {});
    },
    async list(nowMs, max) {
      const [own, stored] = await Promise.all([memory.list(nowMs, max), shared.list(nowMs, max).catch(() => [])]);
      return [...new Set([...stored, ...own])].slice(0, max);
    },
    async remove(member) {
      await memory.remove(member);
      await shared.remove(member).catch(() => {});
    },
  };
}

function redisLockList(redis: RedisClient, key: string): LockList {
  return mirroredLockList({
    async add(member, untilMs) {
      await redis.zadd(key, untilMs, member);
    },
    async list(nowMs, max) {
      // Ended entries are collected as the list is read; the key itself lives no longer than its last entry.
      await redis.zremrangebyscore(key, '-inf', nowMs);
      return redis.zrangebyscore(key, `(${nowMs}`, '+inf', 'LIMIT', 0, max);
    },
    async remove(member) {
      await redis.zrem(key, member);
    },
  });
}

function postgresLockList(pool: pg.Pool, name: string): LockList {
  // Rows of the limits table under their own prefix: its sweep collects them once they end.
  const prefix = `${name}:`;
  return mirroredLockList({
    async add(member, untilMs) {
      await pool.query(
        `insert into ${POSTGRES_LIMITS_TABLE} (key, points, expire) values ($1, 0, $2) on conflict (key) do update set expire = greatest(${POSTGRES_LIMITS_TABLE}.expire, excluded.expire)`,
        [prefix + member, untilMs],
      );
    },
    async list(nowMs, max) {
      const { rows } = await pool.query<{ key: string }>(
        `select key from ${POSTGRES_LIMITS_TABLE} where key like $1 and expire > $2 order by expire desc limit $3`,
        [`${prefix}%`, nowMs, max],
      );
      return rows.map((row) => row.key.slice(prefix.length));
    },
    async remove(member) {
      await pool.query(`delete from ${POSTGRES_LIMITS_TABLE} where key = $1`, [prefix + member]);
    },
  });
}

export interface LimiterBackend {
  readonly kind: LimiterStoreKind;
  createLimiter(options: LimiterOptions): Limiter;
  /** A list that can be enumerated (`LockList`), named apart from every limiter's keys. */
  createLockList(name: string): LockList;
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
    createLockList: () => memoryLockList(),
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
    createLockList: (name) => redisLockList(redis, `${options.keyPrefix}:${name}`),
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
    createLockList: (name) => postgresLockList(pool, name),
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
