/**
 * @module One limiter as the limits see it, apart from the backends that make one
 * (limiter-backend.ts) and the circuit that guards one (store-circuit.ts), which both use it.
 */
import type { RateLimiterRes } from 'rate-limiter-flexible';

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
