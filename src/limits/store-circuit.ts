/**
 * @module The circuit between the limits and a shared store (Redis, PostgreSQL) that may fail or
 * stop answering (DESIGN §9.7). A store that hangs is worse than one that refuses: every request
 * would wait for it. So:
 *
 *   closed --(a call fails, or outlives the time bound)--> open --(a probe answers)--> closed
 *
 * - closed: each call goes to the store, bounded by `timeoutMs` (REDIS_TIMEOUT). A call that
 *   fails or outlives it is answered from this instance's memory, and opens the circuit.
 * - open: every call is answered from memory at once, without touching the store, and the store
 *   is probed every PROBE_INTERVAL_MS off the request path; the first probe that answers closes
 *   the circuit. One log line each way.
 *
 * What was counted in memory is not copied to the store. Once the store answers again it is
 * merged into each answer until it expires in memory (`guardedLimiter`): the counts are added, and
 * of two stored instants (a lock's end) the later wins. So failures counted while degraded still
 * count toward the lock, and a lock reached in memory holds until it ends.
 */
import { RateLimiterRes, type RateLimiterAbstract, type RateLimiterMemory } from 'rate-limiter-flexible';
import { summarizeError, type Logger } from '../logger.js';
import type { Limiter } from './limiter.js';

/** How often an open circuit asks the store whether it answers again. */
const PROBE_INTERVAL_MS = 1000;

/** A call or probe that outlived the time bound: the store may be stuck, not merely refusing. */
class StoreTimeout extends Error {
  constructor(ms: number) {
    super(`the rate limit store did not answer within ${ms} ms`);
    this.name = 'StoreTimeout';
  }
}

/** `work`, or a StoreTimeout once `ms` have passed without its answer (the work itself goes on). */
async function within<T>(ms: number | null, work: Promise<T>): Promise<T> {
  if (ms === null) return work;
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new StoreTimeout(ms)), ms);
  });
  try {
    return await Promise.race([work, late]);
  } finally {
    clearTimeout(timer);
  }
}

export interface StoreCircuitOptions {
  /** Names the store in the log lines. */
  kind: string;
  logger: Logger;
  /** How long one call may wait for the store; null: the store's client bounds it itself. */
  timeoutMs: number | null;
  /** Resolves when the store answers a trivial request; used off the request path and by /readyz. */
  probe(): Promise<void>;
  /**
   * The store failed a call (opening the circuit) or a probe: for example, replace a connection
   * that hangs, so the next probe gets a fresh one.
   */
  onFailure?(cause: unknown): void;
}

export class StoreCircuit {
  #open = false;
  #probing: NodeJS.Timeout | null = null;
  #closed = false;

  constructor(private readonly options: StoreCircuitOptions) {}

  /**
   * Runs `call` against the store within the time bound. Resolves `{ answered: false }` when the
   * circuit is open, or when the call fails or times out (which opens it): the caller answers
   * from memory. A RateLimiterRes rejection is the store's answer (over the limit) and is thrown.
   */
  async attempt<T>(call: () => Promise<T>): Promise<{ answered: true; value: T } | { answered: false }> {
    if (this.#open) return { answered: false };
    try {
      return { answered: true, value: await within(this.options.timeoutMs, call()) };
    } catch (error) {
      if (error instanceof RateLimiterRes) throw error;
      this.trip(error);
      return { answered: false };
    }
  }

  /** Opens the circuit (once) and starts probing; the call in hand is answered from memory. */
  trip(cause: unknown): void {
    if (this.#open) return;
    this.#open = true;
    this.options.onFailure?.(cause);
    const { kind, logger } = this.options;
    logger.warn(
      // Bounded and of known fields only, as every logged error (logger.ts).
      { limiterStore: kind, cause: summarizeError(cause, false) },
      `rate limit store (${kind}) is unreachable; counting in this instance's memory until it returns`,
    );
    this.#scheduleProbe();
  }

  /**
   * Whether the store answers now, for /readyz: an open circuit says no at once (the probe is
   * running); a closed one asks the store, within the time bound and at most `boundMs`, and opens
   * on failure.
   */
  async check(boundMs: number): Promise<boolean> {
    if (this.#open) return false;
    try {
      await within(Math.min(this.options.timeoutMs ?? boundMs, boundMs), this.options.probe());
      return true;
    } catch (error) {
      this.trip(error);
      return false;
    }
  }

  /** Stops probing (the store is being disconnected). */
  close(): void {
    this.#closed = true;
    if (this.#probing !== null) clearTimeout(this.#probing);
    this.#probing = null;
  }

  #scheduleProbe(): void {
    if (this.#closed || this.#probing !== null) return;
    this.#probing = setTimeout(() => void this.#probe(), PROBE_INTERVAL_MS);
    // Probing alone never keeps the process alive.
    this.#probing.unref();
  }

  async #probe(): Promise<void> {
    try {
      await within(this.options.timeoutMs, this.options.probe());
      this.#probing = null;
      if (this.#closed) return;
      this.#open = false;
      this.options.logger.info(
        { limiterStore: this.options.kind },
        `rate limit store (${this.options.kind}) answers again; limits are shared across instances again`,
      );
    } catch (error) {
      this.options.onFailure?.(error);
      this.#probing = null;
      this.#scheduleProbe();
    }
  }
}

/**
 * How a value counted in memory during an outage joins the store's once the store answers again:
 * `sum` for counts (failures, attempts, requests), `max` for a stored instant (a lock's end).
 */
export type MemoryMerge = 'sum' | 'max';

/**
 * A limiter on `store` that `circuit` guards, answered by `memory` while the store does not
 * answer. `points` is the limit `consume` enforces on the merged count.
 */
export function guardedLimiter(
  store: RateLimiterAbstract,
  memory: RateLimiterMemory,
  circuit: StoreCircuit,
  { points, merge }: { points: number; merge: MemoryMerge },
): Limiter {
  // Whether memory may hold anything: until the first outage, calls never look there.
  let memoryUsed = false;
  const inMemory = <T>(call: () => Promise<T>): Promise<T> => {
    memoryUsed = true;
    return call();
  };
  const memoryCount = async (key: string): Promise<number> => (memoryUsed ? ((await memory.get(key))?.consumedPoints ?? 0) : 0);
  const merged = (inStore: number, inMemory: number): number => (merge === 'sum' ? inStore + inMemory : Math.max(inStore, inMemory));
  /** `onStore` while the circuit lets calls through and the store answers; `onMemory` otherwise. */
  const route = async <T>(onStore: () => Promise<T>, onMemory: () => Promise<T>): Promise<T> => {
    const result = await circuit.attempt(onStore);
    return result.answered ? result.value : inMemory(onMemory);
  };

  return {
    consume: (key) =>
      route(
        async () => {
          const answer = await store.consume(key, 1);
          const counted = merged(answer.consumedPoints, await memoryCount(key));
          // eslint-disable-next-line @typescript-eslint/only-throw-error -- a refusal is a RateLimiterRes, as the store's own (rate-limits.ts)
          if (counted > points) throw new RateLimiterRes(0, answer.msBeforeNext, counted, false);
          return answer;
        },
        () => memory.consume(key, 1),
      ),
    increment: (key) =>
      route(
        async () => merged((await store.penalty(key, 1)).consumedPoints, await memoryCount(key)),
        async () => (await memory.penalty(key, 1)).consumedPoints,
      ),
    // Taken back where it was most likely counted: an attempt counted in memory during the outage
    // and released after it must not leave the store's count one short for other instances.
    decrement: (key) =>
      route(
        async () => {
          if ((await memoryCount(key)) > 0) await memory.reward(key, 1);
          else await store.reward(key, 1);
        },
        async () => void (await memory.reward(key, 1)),
      ),
    read: (key) =>
      route(
        async () => merged((await store.get(key))?.consumedPoints ?? 0, await memoryCount(key)),
        async () => (await memory.get(key))?.consumedPoints ?? 0,
      ),
    // A value written to the store supersedes what memory held for the key.
    write: (key, value, durationSeconds) =>
      route(
        async () => {
          await store.set(key, value, durationSeconds);
          if (memoryUsed) await memory.delete(key);
        },
        async () => void (await memory.set(key, value, durationSeconds)),
      ),
    remove: (key) =>
      route(
        async () => {
          await store.delete(key);
          if (memoryUsed) await memory.delete(key);
        },
        async () => void (await memory.delete(key)),
      ),
  };
}
